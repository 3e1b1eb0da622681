// Who plays in this tab: the development sign-in of `felt up` (POST /dev/token: a player token signed
// with the stack's development key, as `felt token --player NAME` makes it), kept in sessionStorage so
// two tabs can be two players and a reload keeps the seat. The token is renewed before it expires.

const STORAGE_KEY = "felt.session";
const RENEW_BEFORE_MS = 10 * 60 * 1000;

export interface PageConfig {
  // The Connect base URL of each service's browser door, by service name.
  doors: Record<string, string>;
  // Each table shard's door by the shard's gRPC address (what TABLE_MOVED names).
  shardDoors: Record<string, string>;
}

export async function loadConfig(): Promise<PageConfig> {
  const response = await fetch("/config.json", { cache: "no-store" });
  if (!response.ok) throw new Error(`/config.json: HTTP ${response.status}`);
  return (await response.json()) as PageConfig;
}

interface Stored {
  player: string;
  token: string;
  expiresAt: number; // seconds since the epoch
}

async function post(path: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) throw new Error(String(answer.error ?? `HTTP ${response.status}`));
  return answer;
}

async function fetchToken(player: string): Promise<Stored> {
  const answer = await post("/dev/token", { player });
  const stored = { player: String(answer.player), token: String(answer.token), expiresAt: Number(answer.expiresAt) };
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(stored));
  return stored;
}

export class Session {
  private renewTimer = 0;

  private constructor(private stored: Stored) {
    this.scheduleRenewal();
  }

  get player(): string {
    return this.stored.player;
  }

  get token(): string {
    return this.stored.token;
  }

  static async signIn(player: string): Promise<Session> {
    return new Session(await fetchToken(player));
  }

  /** The session this tab signed in with, while its token is good. */
  static restore(): Session | null {
    try {
      const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? "null") as Stored | null;
      if (stored && stored.expiresAt * 1000 > Date.now() + 60_000) return new Session(stored);
    } catch {
      // a damaged entry: sign in again
    }
    return null;
  }

  signOut(): void {
    clearTimeout(this.renewTimer);
    sessionStorage.removeItem(STORAGE_KEY);
  }

  /** Development chips: the wallet is given what `amount` lacks (as `felt play` does before a buy-in). */
  async chips(amount: number): Promise<number> {
    const answer = await post("/dev/chips", { amount }, this.token);
    return Number(answer.issued ?? 0);
  }

  async renew(): Promise<void> {
    this.stored = await fetchToken(this.player);
    this.scheduleRenewal();
  }

  private scheduleRenewal(): void {
    clearTimeout(this.renewTimer);
    const due = Math.max(5_000, this.stored.expiresAt * 1000 - Date.now() - RENEW_BEFORE_MS);
    this.renewTimer = window.setTimeout(() => {
      this.renew().catch(() => this.scheduleRenewal());
    }, Math.min(due, 2 ** 31 - 1));
  }
}
