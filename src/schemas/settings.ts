import { z } from "zod";
import { GithubLogin, GithubUserId, InstantOutput } from "./common";

/** The organization's settings and waiting list (contract section 20). */

export const SeatAssignment = z.enum(["manual", "automatic"]).meta({
  id: "SeatAssignment",
  description:
    "manual: only admins turn seats on. automatic: a member without a seat (not a bot) gets one when the service first " +
    "learns of a pull request they authored, if one is available; else they join the waiting list. Never buys seats.",
});

export const OrganizationSettings = z.object({ seatAssignment: SeatAssignment }).meta({ id: "OrganizationSettings" });
export type OrganizationSettings = z.infer<typeof OrganizationSettings>;

/** `PATCH /api/v1/organizations/{org}/settings`: the new value and the value last read. */
export const SettingsPatch = z
  .strictObject({
    seatAssignment: SeatAssignment,
    expectedSeatAssignment: SeatAssignment.meta({ description: "The seatAssignment of your latest read." }),
  })
  .meta({ id: "SettingsPatch" });
export type SettingsPatch = z.output<typeof SettingsPatch>;

export const SettingsChangeResult = z
  .object({ before: OrganizationSettings, after: OrganizationSettings, changed: z.boolean() })
  .meta({ id: "SettingsChangeResult" });
export type SettingsChangeResult = z.infer<typeof SettingsChangeResult>;

/** The most entries `GET .../seat-requests` answers, the oldest first. */
export const MAX_SEAT_REQUESTS = 1000;

export const SeatRequest = z
  .object({
    githubUserId: GithubUserId,
    githubLogin: GithubLogin,
    since: InstantOutput.meta({ description: "When the member joined the waiting list." }),
  })
  .meta({ id: "SeatRequest" });

export const SeatRequestList = z
  .object({
    data: z.array(SeatRequest).max(MAX_SEAT_REQUESTS).meta({ description: "Oldest first; at most 1,000 entries." }),
  })
  .meta({ id: "SeatRequestList" });
export type SeatRequestList = z.infer<typeof SeatRequestList>;
