// A decision's clock as the page shows it: the time the server gave (TableView.decision_ms_left, the time
// bank included, and time_bank_ms_left), counted down from the moment the view arrived. The server's
// clock decides; this one only shows it, and every view read starts it afresh (as felt play's Countdown).

export class Countdown {
  private readonly started = performance.now();
  private readonly bankMs: number;

  constructor(
    private readonly leftMs: number,
    bankMs: number,
  ) {
    this.bankMs = Math.min(bankMs, leftMs);
  }

  remainingMs(): number {
    return Math.max(0, this.leftMs - (performance.now() - this.started));
  }

  /** The share of the decision time (without the bank) left: 1 to 0, for the bar under the seat. */
  fraction(): number {
    const base = this.leftMs - this.bankMs;
    if (base <= 0) return 0;
    return Math.max(0, Math.min(1, (this.remainingMs() - this.bankMs) / base));
  }

  inBank(): boolean {
    return this.remainingMs() <= this.bankMs && this.remainingMs() > 0;
  }

  /** "12 s", "time bank 27 s", "0 s". */
  text(): string {
    const left = this.remainingMs();
    const base = left - this.bankMs;
    if (base > 0) return `${Math.ceil(base / 1000)} s`;
    return left > 0 ? `time bank ${Math.ceil(left / 1000)} s` : "0 s";
  }
}
