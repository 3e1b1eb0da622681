// What every screen is given: where to draw, the page's configuration, who plays, and how to move on.

import type { TableView } from "./gen/poker/table/v1/table_service_pb";
import type { PageConfig, Session } from "./signin";

export interface App {
  root: HTMLElement;
  config: PageConfig;
  session: Session;
  /** The lobby, with a line to show at its top (e.g. the chips a leave gave back). */
  lobby(message?: string): void;
  /** A table the player sits at: the view JoinTable answered, or none (it is read). */
  table(tableId: string, view?: TableView, tournamentId?: string): void;
  /** A tournament's screen: registering for it first when `register`; `stay`: opened from the player's
   * table, it does not send them back there (a button does). */
  tournament(tournamentId: string, register?: boolean, stay?: boolean): void;
  /** A casino table: the player takes a seat there. */
  casino(tableId: string): void;
  signOut(): void;
}
