import { z } from "zod";
import { GithubOrgName, GithubRepoName, INSTANT_RANGE, InstantInput } from "./common";

export const MAX_EVENTS_PER_BATCH = 1000;

/**
 * Free text of at most `max` characters, well-formed: an unpaired surrogate (half of a UTF-16 pair)
 * has no UTF-8 spelling, so D1 would store it as bytes that read back as other characters: the
 * export would show what was never sent, and a summary grouped by it would not find its own blocks.
 */
const Text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((text) => text.isWellFormed(), { message: "must be well-formed Unicode text (no unpaired surrogate)" });

const PrNumber = z.number().int().min(1).max(2_147_483_647);
const Lines = z.number().int().min(0).max(1_000_000_000);
/** Ids issued by the reviewer; strings and integers are both accepted and compared as text. */
const ExternalId = z.union([Text(255), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)]).transform(String);

const prRef = { org: GithubOrgName, repo: GithubRepoName, prNumber: PrNumber };

/** The record's version (contract section 5, "Versions"). */
const version = {
  updatedAt: InstantInput.meta({
    description:
      "When the record reached the state this event reports, at the source. For one record the event with the greatest updatedAt wins whatever the arrival order; an older or equal one changes nothing (it still counts in accepted). " +
      INSTANT_RANGE,
  }),
};

export const PullRequestEvent = z
  .strictObject({
    type: z.literal("pull_request"),
    ...prRef,
    author: Text(255),
    createdAt: InstantInput,
    mergedAt: InstantInput.nullable(),
    linesAdded: Lines.nullable(),
    linesDeleted: Lines.nullable(),
    ...version,
  })
  .meta({ id: "PullRequestEvent" });

export const ReviewEvent = z
  .strictObject({
    type: z.literal("review"),
    ...prRef,
    reviewId: ExternalId,
    status: z.enum(["completed", "failed", "in_progress"]),
    completedAt: InstantInput.nullable(),
    ...version,
  })
  .refine((e) => e.status !== "completed" || e.completedAt !== null, {
    message: "is required when status is completed",
    path: ["completedAt"],
  })
  .meta({ id: "ReviewEvent" });

export const FindingEvent = z
  .strictObject({
    type: z.literal("finding"),
    ...prRef,
    findingId: ExternalId,
    createdAt: InstantInput,
    posted: z.boolean(),
    aiAddressed: z.boolean(),
    feedback: z.enum(["positive", "negative"]).nullable(),
    ...version,
  })
  .meta({ id: "FindingEvent" });

export const AiAuthorshipEvent = z
  .strictObject({
    type: z.literal("ai_authorship"),
    ...prRef,
    sourceId: ExternalId,
    lines: Lines,
    ...version,
  })
  .meta({ id: "AiAuthorshipEvent" });

export const Event = z.discriminatedUnion("type", [PullRequestEvent, ReviewEvent, FindingEvent, AiAuthorshipEvent]);
export type Event = z.output<typeof Event>;

/** Control plane: `POST /internal/v1/events`. Validated as a whole; one bad event rejects the batch. */
export const EventBatch = z
  .strictObject({ events: z.array(Event).max(MAX_EVENTS_PER_BATCH, `at most ${MAX_EVENTS_PER_BATCH} events per batch`) })
  .meta({ id: "EventBatch" });
export type EventBatch = z.output<typeof EventBatch>;

export const EventBatchAccepted = z.object({ accepted: z.number().int().min(0) }).meta({ id: "EventBatchAccepted" });
