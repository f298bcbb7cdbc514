CREATE TABLE `summary_days` (
	`org_key` text NOT NULL,
	`day` integer NOT NULL,
	`pull_requests` integer NOT NULL,
	`lo` integer,
	`hi` integer,
	`totals` text,
	`repos` text,
	`authors` text,
	`repo_of` text,
	`author_of` text,
	`figures` text,
	`durations` text,
	`version` integer NOT NULL,
	PRIMARY KEY(`org_key`, `day`)
);

--> statement-breakpoint
-- The summary's day blocks (storage/summary-days.ts) are kept exact by deleting a day's block
-- whenever a pull request row merged on that day is inserted, deleted, or changes a column the
-- summary reads (before and after the change: a new merge day loses its block too). Every writer
-- (events, webhooks, sync, renames, moves between shards) writes `pull_requests`, so none can
-- leave a block behind; the next summary that covers the day builds it again. Deleting a block
-- that does not exist writes nothing.
CREATE TRIGGER `summary_days_pull_request_added` AFTER INSERT ON `pull_requests`
WHEN new.`merged_at` IS NOT NULL
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_pull_request_removed` AFTER DELETE ON `pull_requests`
WHEN old.`merged_at` IS NOT NULL
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_pull_request_changed` AFTER UPDATE ON `pull_requests`
WHEN old.`org_key` IS NOT new.`org_key` OR old.`repo_key` IS NOT new.`repo_key` OR old.`repo` IS NOT new.`repo` OR old.`author` IS NOT new.`author` OR old.`created_at` IS NOT new.`created_at` OR old.`merged_at` IS NOT new.`merged_at` OR old.`lines_added` IS NOT new.`lines_added` OR old.`lines_deleted` IS NOT new.`lines_deleted` OR old.`first_reviewed_at` IS NOT new.`first_reviewed_at` OR old.`last_reviewed_at` IS NOT new.`last_reviewed_at` OR old.`ai_lines` IS NOT new.`ai_lines` OR old.`posted_findings` IS NOT new.`posted_findings` OR old.`fixed_findings` IS NOT new.`fixed_findings` OR old.`first_finding_at` IS NOT new.`first_finding_at` OR old.`last_finding_at` IS NOT new.`last_finding_at`
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
END;
