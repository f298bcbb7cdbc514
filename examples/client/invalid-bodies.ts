/**
 * Bodies the member PATCH refuses with 400 must not compile either: a typed client learns the
 * pairing rules (contract section 4) from the document, not from a 400. Each line below is such a
 * body; `@ts-expect-error` fails `npm run client:check` the day the document lets one through.
 */
import type { paths } from "./schema";

type MemberPatch =
  paths["/api/v1/organizations/{org}/members/{githubUserId}"]["patch"]["requestBody"]["content"]["application/json"];
type MemberBatchPatch = paths["/api/v1/organizations/{org}/members"]["patch"]["requestBody"]["content"]["application/json"];

/** The valid shapes, so that the refusals below are about the rules and not about a broken type. */
export const valid: MemberPatch[] = [
  { seat: true, expectedSeat: false },
  { role: "admin", expectedRole: "member" },
  { seat: false, expectedSeat: true, role: "viewer", expectedRole: "member" },
];
export const validBatch: MemberBatchPatch = { changes: [{ githubUserId: "1002", seat: true, expectedSeat: false }] };

// @ts-expect-error no pair at all
export const noPair: MemberPatch = {};
// @ts-expect-error seat without expectedSeat
export const seatAlone: MemberPatch = { seat: true };
// @ts-expect-error expectedRole without role
export const guardAlone: MemberPatch = { expectedRole: "admin" };
// @ts-expect-error a complete seat pair with half a role pair
export const halfSecondPair: MemberPatch = { seat: true, expectedSeat: false, role: "admin" };
// @ts-expect-error "true" is not true
export const stringBoolean: MemberPatch = { seat: "true", expectedSeat: false };
// @ts-expect-error owner is not a role
export const unknownRole: MemberPatch = { role: "owner", expectedRole: "admin" };
// @ts-expect-error no other fields
export const extraField: MemberPatch = { seat: true, expectedSeat: false, note: "x" };
// @ts-expect-error a change names its member
export const changeWithoutMember: MemberBatchPatch = { changes: [{ seat: true, expectedSeat: false }] };
// @ts-expect-error a change's pairs follow the same rules
export const changeHalfPair: MemberBatchPatch = { changes: [{ githubUserId: "1002", role: "admin" }] };
