// Felt's web table: sign in with a player name (development), the lobby, a table. One screen at a time
// in #app; the tab's session (sessionStorage) keeps a reload signed in and seated.

import type { App } from "./app";
import type { TableView } from "./gen/poker/table/v1/table_service_pb";
import { h, show } from "./dom";
import { LobbyScreen } from "./lobby";
import { loadConfig, Session, type PageConfig } from "./signin";
import { TableScreen } from "./table";
import { CasinoScreen } from "./casino";
import { TournamentScreen } from "./tournament";

interface Screen {
  close(): void;
}

const LAST_TABLE = "felt.table"; // the table this tab plays at, to go back to it after a reload

function signInScreen(root: HTMLElement, config: PageConfig, message = ""): void {
  const name = h("input", { type: "text", name: "player", maxlength: 64, placeholder: "your player name", autocomplete: "username", "data-test": "player-name", required: true });
  const notice = h("div", { class: "notice", "data-test": "notice", role: "status" }, message);
  const form = h(
    "form",
    { class: "sign-in", "data-test": "sign-in" },
    h("h1", {}, "Felt"),
    h("p", {}, "Poker against friends and bots. In development, a name is all it takes to sign in."),
    h("label", {}, "Player name ", name),
    h("button", { type: "submit", class: "primary", "data-test": "sign-in-button" }, "Sign in"),
    notice,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    Session.signIn(name.value)
      .then((session) => start(root, config, session))
      .catch((error: unknown) => show(notice, h("span", { class: "refusal" }, `Could not sign in: ${error instanceof Error ? error.message : String(error)}`)));
  });
  show(root, form);
  name.focus();
}

function start(root: HTMLElement, config: PageConfig, session: Session): void {
  let screen: Screen | undefined;
  const app: App = {
    root,
    config,
    session,
    lobby(message?: string) {
      screen?.close();
      sessionStorage.removeItem(LAST_TABLE);
      const lobby = new LobbyScreen(app, message);
      screen = lobby;
      lobby.start();
    },
    table(tableId: string, view?: TableView, tournamentId?: string) {
      screen?.close();
      if (!tournamentId) sessionStorage.setItem(LAST_TABLE, tableId);
      const table = new TableScreen(app, tableId, view, tournamentId);
      screen = table;
      void table.start();
    },
    tournament(tournamentId: string, register = false, stay = false) {
      screen?.close();
      sessionStorage.removeItem(LAST_TABLE);
      const tournament = new TournamentScreen(app, tournamentId, register, stay);
      screen = tournament;
      void tournament.start();
    },
    casino(tableId: string) {
      screen?.close();
      sessionStorage.removeItem(LAST_TABLE);
      const casino = new CasinoScreen(app, tableId);
      screen = casino;
      void casino.start();
    },
    signOut() {
      screen?.close();
      sessionStorage.removeItem(LAST_TABLE);
      session.signOut();
      signInScreen(root, config);
    },
  };
  const last = sessionStorage.getItem(LAST_TABLE);
  if (last) app.table(last);
  else app.lobby();
}

async function boot(): Promise<void> {
  const root = document.getElementById("app") ?? document.body.appendChild(h("main", { id: "app" }));
  let config: PageConfig;
  try {
    config = await loadConfig();
  } catch (error) {
    show(root, h("p", { class: "refusal" }, `This page is served by felt up: ${String(error)}`));
    return;
  }
  const session = Session.restore();
  if (session) start(root, config, session);
  else signInScreen(root, config);
}

void boot();
