-- The day blocks gain each duration's counts per bucket and the durations sorted (issue 31:
-- rules/duration-buckets.ts), and blocks of one repository's day beside the organization's
-- (`repo_key`, '' for the organization's: a summary of listed repositories reads theirs, issue 33).
-- Blocks are derived data, built again by the next summary that covers their day, so the table is
-- made anew rather than altered: its columns in the order the summary reads them (the small ones
-- first, the per pull request ones last), which ALTER TABLE cannot give. The triggers are made anew
-- too: a write to a pull request deletes its day's block of the organization and of its repository.
DROP TRIGGER `summary_days_pull_request_added`;
--> statement-breakpoint
DROP TRIGGER `summary_days_pull_request_removed`;
--> statement-breakpoint
DROP TRIGGER `summary_days_pull_request_changed`;
--> statement-breakpoint
DROP TABLE `summary_days`;
--> statement-breakpoint
CREATE TABLE `summary_days` (
	`org_key` text NOT NULL,
	`repo_key` text NOT NULL,
	`day` integer NOT NULL,
	`pull_requests` integer NOT NULL,
	`lo` integer,
	`hi` integer,
	`version` integer NOT NULL,
	`totals` text,
	`counts` text,
	`sorted` blob,
	`repos` text,
	`authors` text,
	`repo_of` text,
	`author_of` text,
	`figures` text,
	`durations` text,
	PRIMARY KEY(`org_key`, `repo_key`, `day`)
);
--> statement-breakpoint
-- As migration 0012's: a block always equals what a build would write now (storage/summary-days.ts).
CREATE TRIGGER `summary_days_pull_request_added` AFTER INSERT ON `pull_requests`
WHEN new.`merged_at` IS NOT NULL
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `repo_key` = '' AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `repo_key` = new.`repo_key` AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_pull_request_removed` AFTER DELETE ON `pull_requests`
WHEN old.`merged_at` IS NOT NULL
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `repo_key` = '' AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `repo_key` = old.`repo_key` AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_pull_request_changed` AFTER UPDATE ON `pull_requests`
WHEN old.`org_key` IS NOT new.`org_key` OR old.`repo_key` IS NOT new.`repo_key` OR old.`repo` IS NOT new.`repo` OR old.`author` IS NOT new.`author` OR old.`created_at` IS NOT new.`created_at` OR old.`merged_at` IS NOT new.`merged_at` OR old.`lines_added` IS NOT new.`lines_added` OR old.`lines_deleted` IS NOT new.`lines_deleted` OR old.`first_reviewed_at` IS NOT new.`first_reviewed_at` OR old.`last_reviewed_at` IS NOT new.`last_reviewed_at` OR old.`ai_lines` IS NOT new.`ai_lines` OR old.`posted_findings` IS NOT new.`posted_findings` OR old.`fixed_findings` IS NOT new.`fixed_findings` OR old.`first_finding_at` IS NOT new.`first_finding_at` OR old.`last_finding_at` IS NOT new.`last_finding_at`
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `repo_key` = '' AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `repo_key` = old.`repo_key` AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `repo_key` = '' AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `repo_key` = new.`repo_key` AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
END;
