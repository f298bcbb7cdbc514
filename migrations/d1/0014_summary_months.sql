-- Month blocks of a listed repository (issue 33: storage/summary-days.ts `buildSummaryMonths`), made
-- from its day blocks; and the triggers made anew so that a write to a pull request also deletes
-- its repository's block of the month, beside its day's blocks of the organization and of its
-- repository (as migration 0013's). The month's first day is the UTC day number of the merge's
-- calendar month start, as the Worker computes it (`monthStartDay`).
CREATE TABLE `summary_months` (
	`org_key` text NOT NULL,
	`repo_key` text NOT NULL,
	`month` integer NOT NULL,
	`pull_requests` integer NOT NULL,
	`lo` integer,
	`hi` integer,
	`days` text,
	PRIMARY KEY(`org_key`, `repo_key`, `month`)
);
--> statement-breakpoint
DROP TRIGGER `summary_days_pull_request_added`;
--> statement-breakpoint
DROP TRIGGER `summary_days_pull_request_removed`;
--> statement-breakpoint
DROP TRIGGER `summary_days_pull_request_changed`;
--> statement-breakpoint
CREATE TRIGGER `summary_days_pull_request_added` AFTER INSERT ON `pull_requests`
WHEN new.`merged_at` IS NOT NULL
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `repo_key` = '' AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `repo_key` = new.`repo_key` AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_months` WHERE `org_key` = new.`org_key` AND `repo_key` = new.`repo_key` AND `month` = CAST(strftime('%s', ((new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000) * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400;
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_pull_request_removed` AFTER DELETE ON `pull_requests`
WHEN old.`merged_at` IS NOT NULL
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `repo_key` = '' AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `repo_key` = old.`repo_key` AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_months` WHERE `org_key` = old.`org_key` AND `repo_key` = old.`repo_key` AND `month` = CAST(strftime('%s', ((old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000) * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400;
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_pull_request_changed` AFTER UPDATE ON `pull_requests`
WHEN old.`org_key` IS NOT new.`org_key` OR old.`repo_key` IS NOT new.`repo_key` OR old.`repo` IS NOT new.`repo` OR old.`author` IS NOT new.`author` OR old.`created_at` IS NOT new.`created_at` OR old.`merged_at` IS NOT new.`merged_at` OR old.`lines_added` IS NOT new.`lines_added` OR old.`lines_deleted` IS NOT new.`lines_deleted` OR old.`first_reviewed_at` IS NOT new.`first_reviewed_at` OR old.`last_reviewed_at` IS NOT new.`last_reviewed_at` OR old.`ai_lines` IS NOT new.`ai_lines` OR old.`posted_findings` IS NOT new.`posted_findings` OR old.`fixed_findings` IS NOT new.`fixed_findings` OR old.`first_finding_at` IS NOT new.`first_finding_at` OR old.`last_finding_at` IS NOT new.`last_finding_at`
BEGIN
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `repo_key` = '' AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = old.`org_key` AND `repo_key` = old.`repo_key` AND `day` = (old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_months` WHERE `org_key` = old.`org_key` AND `repo_key` = old.`repo_key` AND `month` = CAST(strftime('%s', ((old.`merged_at` - (((old.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000) * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400;
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `repo_key` = '' AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_days` WHERE `org_key` = new.`org_key` AND `repo_key` = new.`repo_key` AND `day` = (new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000;
  DELETE FROM `summary_months` WHERE `org_key` = new.`org_key` AND `repo_key` = new.`repo_key` AND `month` = CAST(strftime('%s', ((new.`merged_at` - (((new.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000) * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400;
END;
