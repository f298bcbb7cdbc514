-- Spans of month blocks per group (issue 31, tenth session: storage/summary-group-spans.ts): a
-- run of three or more whole calendar months made into one head and rows per bucket (each group's
-- values of a bucket, and every group's together), from the months' heads and the span's pull
-- requests, when every day block those heads stand for is still stored as they recorded it. A
-- trigger deletes a span's head whenever one of its day blocks is deleted (every write to a pull
-- request of the day deletes it: migration 0014's triggers), so a head that stands always equals
-- what a build would write now. The rows of a deleted head stay until the next build of a span of
-- that kind deletes them: served only with a head of the same version. Built by the summaries that
-- need them: nothing to backfill.
CREATE TABLE `summary_group_span_buckets` (
	`org_key` text NOT NULL,
	`kind` text NOT NULL,
	`first_day` integer NOT NULL,
	`last_day` integer NOT NULL,
	`group_key` text NOT NULL,
	`metric` integer NOT NULL,
	`bucket` integer NOT NULL,
	`version` integer NOT NULL,
	`sorted` blob,
	PRIMARY KEY(`org_key`, `kind`, `first_day`, `last_day`, `group_key`, `metric`, `bucket`)
);
--> statement-breakpoint
CREATE TABLE `summary_group_span_heads` (
	`org_key` text NOT NULL,
	`kind` text NOT NULL,
	`first_day` integer NOT NULL,
	`last_day` integer NOT NULL,
	`built` integer NOT NULL,
	`pull_requests` integer NOT NULL,
	`lo` integer,
	`hi` integer,
	`version` integer NOT NULL,
	`days` text,
	`groups` text,
	`months` text,
	PRIMARY KEY(`org_key`, `kind`, `first_day`, `last_day`)
);

--> statement-breakpoint
CREATE TRIGGER `summary_group_spans_day_gone` AFTER DELETE ON `summary_days`
WHEN old.`repo_key` = ''
BEGIN
  DELETE FROM `summary_group_span_heads` WHERE `org_key` = old.`org_key` AND `first_day` <= old.`day` AND `last_day` >= old.`day`;
END;