// The player's turn: a button for each legal action with its amount, and for a bet or raise a slider
// and a box within the legal minimum and maximum ("to" amounts, as ActRequest.amount), with the presets
// the server resolved (clicking one sets the amount). Nothing is offered that LegalActions does not allow.

import { ActionKind, Preset, type LegalActions } from "./gen/poker/table/v1/table_service_pb";
import { h } from "./dom";
import { chips, PRESET_LABELS } from "./words";

export interface Choice {
  kind: ActionKind;
  amount?: bigint;
  preset?: Preset;
}

export function actionPanel(legal: LegalActions, bigBlind: bigint, send: (choice: Choice) => void): HTMLElement {
  const panel = h("div", { class: "turn", "data-test": "turn" });
  const buttons = h("div", { class: "buttons" });
  panel.appendChild(buttons);
  const button = (label: string, test: string, choice: Choice, extra = "") =>
    buttons.appendChild(h("button", { class: `act ${extra}`.trim(), "data-test": test, onclick: () => send(choice) }, label));
  if (legal.canFold) button("Fold", "fold", { kind: ActionKind.FOLD }, "fold");
  if (legal.canCheck) button("Check", "check", { kind: ActionKind.CHECK });
  if (legal.callAmount > 0n) button(`Call ${chips(legal.callAmount)}`, "call", { kind: ActionKind.CALL });
  if (legal.minTo > 0n) {
    const min = Number(legal.minTo);
    const max = Number(legal.maxTo);
    const verb = legal.betKind === ActionKind.BET ? "Bet" : "Raise to";
    const step = Math.max(1, Math.min(Number(bigBlind) || 1, max - min || 1));
    const slider = h("input", { type: "range", min, max, step, value: min, "data-test": "amount-slider", "aria-label": "amount" });
    const box = h("input", { type: "number", min, max, step: 1, value: min, "data-test": "amount", "aria-label": "amount" });
    const sizing = h("button", { class: "act bet", "data-test": "bet" }, `${verb} ${chips(min)}`);
    const amount = () => Math.min(max, Math.max(min, Math.round(Number(box.value) || min)));
    const set = (value: number) => {
      // The slider moves in big blinds; its ends are the exact limits.
      const clamped = Math.min(max, Math.max(min, Math.round(value)));
      box.value = String(clamped);
      slider.value = String(clamped);
      sizing.textContent = `${verb} ${chips(clamped)}`;
    };
    slider.addEventListener("input", () => set(Number(slider.value) >= max ? max : Number(slider.value)));
    box.addEventListener("input", () => set(amount()));
    sizing.addEventListener("click", () => send({ kind: legal.betKind, amount: BigInt(amount()) }));
    const presets = h(
      "div",
      { class: "presets" },
      ...legal.presets.map((p) =>
        h(
          "button",
          { class: "preset", "data-test": `preset-${Preset[p.preset].toLowerCase()}`, title: chips(p.amount), onclick: () => set(Number(p.amount)) },
          PRESET_LABELS[p.preset] ?? "?",
        ),
      ),
    );
    buttons.appendChild(sizing);
    panel.appendChild(h("div", { class: "sizing" }, h("span", { class: "limits" }, `${chips(min)}`), slider, h("span", { class: "limits" }, `${chips(max)}`), box, presets));
  }
  if (legal.canAllIn) button(`All-in ${chips(legal.allInTo)}`, "allin", { kind: ActionKind.ALL_IN }, "allin");
  return panel;
}
