import type { Hold, Identity } from "../directory/identity";
import type { AuditActor, AuditEntry, AuditKey, AuditSource } from "../schemas/audit";
import type { Member, MemberUpdateResult, SeatSummary } from "../schemas/member";
import type { Organization, OrganizationEntry } from "../schemas/organization";
import type { SyncRun } from "../schemas/sync";
import type { OrgKeyView } from "./org-keys";
import type { AuditFilters } from "./store/audit-log";
import type { MemberCursor } from "./store/members";

/** The shapes the organization object's RPC methods take and answer, for its callers. */

/**
 * Who and what made a member sync (control plane or, later, a GitHub webhook): recorded in the
 * audit log as `source` with the request's correlation id. `actor` is the person behind it when
 * one is known (a webhook's sender), else null.
 */
export interface ChangeOrigin {
  source: Exclude<AuditSource, "api">;
  correlationId: string;
  actor?: AuditActor | null;
  /** A GitHub delivery's: when the service received it (the queue message's `receivedAt`), if known. */
  receivedAt?: number | null;
}

/** Who made a guarded change over the API, for its audit entries (contract sections 8 and 18). */
export interface ChangeRequest {
  correlationId: string;
  /** The key that made it; null for the app's session. */
  key: AuditKey | null;
  /** The caller's address. */
  ip: string | null;
}

/** Who changes an organization key, for its audit entry. */
export interface KeyRequest {
  correlationId: string;
  ip: string | null;
}

/** An organization key created or regenerated, and the hash of the value it replaced (its lookup goes). */
export interface OrgKeyCreated {
  key: OrgKeyView;
  previousHash: string | null;
}

/** A page of members in list order, the position after its last one, and the seats. */
export interface MemberRows {
  data: Member[];
  next: MemberCursor | null;
  seats: SeatSummary;
}

export interface AuditRows {
  data: AuditEntry[];
  /** The id to continue below, or null on the last page. */
  next: number | null;
}

/**
 * What this organization says about one user, for the organizations list: the entry when the
 * user is a member of an installed organization, and `member`/`version` for repairing that user's
 * index when it claims a membership that is gone.
 */
export interface MembershipAnswer {
  member: boolean;
  version: number;
  entry: OrganizationEntry | null;
}

/** A repository rename whose D1 rows still have to follow (see `pendingRenames`), at its place in their log. */
export interface PendingRename {
  seq: number;
  fromKey: string;
  toName: string;
}

/** What the directory in D1 learns of this object: `storage/directory.ts` `recordHome`. */
export type DirectoryIdentity = Identity & { home: string; installationId: number; version: number };

/** `putOrganization`: stored; or not here (no installation, and the caller did not say to create one); or another organization's. */
export type PutOrganizationResult =
  | { kind: "stored"; organization: Organization; directory: DirectoryIdentity }
  | { kind: "absent" }
  | { kind: "taken" };

/**
 * `applyGithubChange`: applied (now, or by an earlier attempt: `applied` false), with the repository
 * renames still to follow in D1 and, when the directory in D1 may need to learn this object's
 * identity (it changed now, or an earlier attempt may have failed before writing D1), that
 * identity. `taken`: an installation for an organization this object is not (the caller allocates
 * it a home of its own). `elsewhere`: any other change of an organization this object is not.
 */
export type GithubChangeResult =
  | {
      kind: "applied";
      applied: boolean;
      renames: PendingRename[];
      /** Logins left by a rename whose stray rows are still to be set apart or gathered (`held_logins`). */
      holds: Hold[];
      /** The installation held now and the organization's login (what a signal reads GitHub as); null when not installed. */
      installation: { id: number; login: string } | null;
      /** `version`: the membership clock, raised by every change of identity (`recordHome` keeps the newest). */
      directory: DirectoryIdentity | null;
    }
  | { kind: "taken" }
  | { kind: "elsewhere" };

/** The answer to a list of member changes: one result per change, in order, and the seats left after all of them. */
export interface MemberChangesResult {
  results: MemberUpdateResult[];
  availableSeats: number;
}

/** `beginSync`: a sync started (or the one this trigger started before: `created` says whether its Workflow instance exists), or refused. */
export type SyncBegin =
  | { kind: "not_installed" }
  /** `home`: what the running one's Workflow instance is named after (`syncInstanceId`); `created`: whether it was created. */
  /** `progressAt`: epoch ms of the run's last report (its start when none yet). */
  | { kind: "in_progress"; run: SyncRun; home: string; created: boolean; progressAt: number }
  | { kind: "started"; run: SyncRun; home: string; installationId: number; created: boolean };

/** `writeSyncPage`: written (the current login, the repositories as stored), or `stale`: the installation changed since the sync began. */
export type SyncPageAnswer =
  | { kind: "written"; login: string; repositories: { id: number; name: string; private: boolean }[] }
  | { kind: "stale" };

/** `readAuditLog`'s filters (`store/audit-log.ts`), below an entry id, a page size. */
export type AuditQuery = AuditFilters & { before?: number; limit: number };
