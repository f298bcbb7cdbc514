import { parse } from "csv-parse/sync";
import { expect } from "vitest";
import {
  addMember,
  adminOk,
  call,
  createKey,
  createOrg,
  createUser,
  type MemberErrorBody,
  type OrgOptions,
  unique,
  uniqueUserId,
} from "./helpers";

/** Helpers for the section 8 surface: an organization, an admin caller with a members key, and request helpers. */

export type Role = "member" | "admin" | "viewer";
export type State = { seat: boolean; role: Role };
export type Member = {
  githubUserId: string;
  githubLogin: string;
  workEmail: string;
  role: Role;
  seat: boolean;
  isBot: boolean;
  lastActivityAt?: string | null;
};
export type MemberPage = {
  data: Member[];
  nextCursor: string | null;
  seats: { purchased: number; used: number; available: number };
};
export type UpdateResult = {
  githubUserId: string;
  before: State;
  after: State;
  changed: boolean;
  availableSeats: number;
  purchasedQuantityChanged: boolean;
};
export type BatchResult = { results: UpdateResult[]; availableSeats: number };
export type AuditEntry = {
  id: string;
  at: string;
  action: "member.added" | "member.updated" | "member.removed";
  actor: { githubUserId: string; githubLogin: string } | null;
  source: "api" | "sync" | "github";
  githubUserId: string;
  githubLogin: string | null;
  before: State | null;
  after: State | null;
  correlationId: string;
  key: { id: string; name: string } | null;
  ip: string | null;
};
export type AuditPage = { data: AuditEntry[]; nextCursor: string | null };

export const subscription = (purchasedSeats: number, extra: Partial<{ status: string; billedThroughService: boolean }> = {}) => ({
  status: "active",
  billedThroughService: true,
  purchasedSeats,
  ...extra,
});

export const errorOf = async (res: Response) => ((await res.json()) as MemberErrorBody).error;

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** A caller with a members key. */
export async function keyedUser() {
  const id = await createUser();
  const { key } = await createKey(id, "members");
  return { id, key, auth: bearer(key) };
}

export async function setup(options: OrgOptions & { callerRole?: Role; login?: string } = {}) {
  const org = await createOrg(options.login ?? unique("adm"), { plan: "team", subscription: subscription(10), ...options });
  const caller = await keyedUser();
  await addMember(org, caller.id, options.callerRole ?? "admin", { seat: false });
  const auth = caller.auth;
  const list = (query = "", o = org, headers: Record<string, string> = auth) =>
    call(`/api/v1/organizations/${o}/members${query ? `?${query}` : ""}`, { headers });
  const listOk = async (query = "") => {
    const res = await list(query);
    expect(res.status).toBe(200);
    return (await res.json()) as MemberPage;
  };
  const batch = (body: unknown, headers: Record<string, string> = {}, o = org) =>
    call(`/api/v1/organizations/${o}/members`, {
      method: "PATCH",
      headers: { ...auth, "Content-Type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const patch = (id: string, body: unknown, headers: Record<string, string> = {}) =>
    call(`/api/v1/organizations/${org}/members/${id}`, {
      method: "PATCH",
      headers: { ...auth, "Content-Type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const audit = (query = "", headers: Record<string, string> = auth, o = org) =>
    call(`/api/v1/organizations/${o}/audit-log${query ? `?${query}` : ""}`, { headers });
  const auditOk = async (query = "") => {
    const res = await audit(query);
    expect(res.status).toBe(200);
    return (await res.json()) as AuditPage;
  };
  /** A member with a chosen login (default user<id>). */
  const member = async (
    role: Role = "member",
    extra: { seat?: boolean; isBot?: boolean; login?: string; email?: string } = {},
  ) => {
    const id = uniqueUserId();
    await adminOk("PUT", `/internal/v1/organizations/${org}/members/${id}`, {
      githubLogin: extra.login ?? `user${id}`,
      workEmail: extra.email ?? `user${id}@example.com`,
      role,
      seat: extra.seat ?? false,
      isBot: extra.isBot ?? false,
    });
    return id;
  };
  const state = async (id: string): Promise<State> => {
    const res = await call(`/api/v1/organizations/${org}/members/${id}`, { headers: auth });
    expect(res.status).toBe(200);
    const m = (await res.json()) as Member;
    return { seat: m.seat, role: m.role };
  };
  return { org, caller, auth, list, listOk, batch, patch, audit, auditOk, member, state };
}

/** Every page of a list, following nextCursor; `between` runs after each page. */
export async function walk<T>(
  fetchPage: (cursor: string | null) => Promise<{ data: T[]; nextCursor: string | null }>,
  between: (page: number) => Promise<void> = async () => {},
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | null = null;
  let pages = 0;
  for (;;) {
    const page = await fetchPage(cursor);
    items.push(...page.data);
    pages++;
    if (page.nextCursor === null) return { items, pages };
    cursor = page.nextCursor;
    await between(pages);
    if (pages > 1000) throw new Error("walk does not end");
  }
}

/** `&cursor=...` for a page after the first, else nothing. */
export const cursorParam = (cursor: string | null) => (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");

/**
 * Every CSV page of a list (contract section 21), following X-Next-Cursor; each page checked: 200,
 * text/csv with Vary: Accept, the header line `header` first, CRLF line ends, and while there is a
 * next page a `Link: <...>; rel="next"` whose URL carries the same cursor, format=csv and the
 * parameters of `linkKeeps`; none on the last page. Returns the rows without headers and the pages.
 */
export async function csvWalk(
  fetchPage: (cursor: string | null) => Promise<Response>,
  header: string,
  linkKeeps: Record<string, string> = {},
): Promise<{ rows: string[][]; pages: number }> {
  const rows: string[][] = [];
  let cursor: string | null = null;
  let pages = 0;
  for (;;) {
    const res = await fetchPage(cursor);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("Vary")).toBe("Accept");
    const text = await res.text();
    expect(text.startsWith(`${header}\r\n`)).toBe(true);
    expect(text.endsWith("\r\n")).toBe(true);
    const [first, ...body] = parse(text) as string[][];
    expect(first?.join(",")).toBe(header);
    rows.push(...body);
    pages++;
    cursor = res.headers.get("X-Next-Cursor");
    if (cursor === null) {
      expect(res.headers.get("Link")).toBeNull();
      return { rows, pages };
    }
    const next = new URL(/^<([^>]+)>; rel="next"$/.exec(res.headers.get("Link") ?? "")?.[1] ?? "");
    expect(next.searchParams.get("cursor")).toBe(cursor);
    expect(next.searchParams.get("format")).toBe("csv");
    for (const [name, value] of Object.entries(linkKeeps)) expect(next.searchParams.get(name)).toBe(value);
    if (pages > 1000) throw new Error("walk does not end");
  }
}
