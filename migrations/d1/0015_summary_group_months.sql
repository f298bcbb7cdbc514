-- Month blocks per group of the organization (issue 31: storage/summary-group-months.ts), made from
-- the rows of a run of a month's days (the whole month, or at a window's edge the days it can
-- serve) when each of those days has the organization's day block; and a trigger that
-- deletes a month's heads whenever one of those day blocks is deleted (every write to a pull request
-- of the day deletes it: migration 0014's triggers), so a head that stands always equals what a
-- build would write now. The group and bucket rows of a deleted head stay until the next build of
-- their month deletes them: served only with a head of the same version. Built by the summaries
-- that need them: nothing to backfill.
CREATE TABLE `summary_group_month_buckets` (
	`org_key` text NOT NULL,
	`kind` text NOT NULL,
	`month` integer NOT NULL,
	`first_day` integer NOT NULL,
	`last_day` integer NOT NULL,
	`metric` integer NOT NULL,
	`bucket` integer NOT NULL,
	`version` integer NOT NULL,
	`sorted` blob,
	PRIMARY KEY(`org_key`, `kind`, `month`, `first_day`, `last_day`, `metric`, `bucket`)
);
--> statement-breakpoint
CREATE TABLE `summary_group_month_heads` (
	`org_key` text NOT NULL,
	`month` integer NOT NULL,
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
	PRIMARY KEY(`org_key`, `month`, `kind`, `first_day`, `last_day`)
);
--> statement-breakpoint
CREATE TABLE `summary_group_months` (
	`org_key` text NOT NULL,
	`kind` text NOT NULL,
	`month` integer NOT NULL,
	`first_day` integer NOT NULL,
	`last_day` integer NOT NULL,
	`group_key` text NOT NULL,
	`version` integer NOT NULL,
	`sorted` blob,
	PRIMARY KEY(`org_key`, `kind`, `month`, `first_day`, `last_day`, `group_key`)
);
--> statement-breakpoint
CREATE TRIGGER `summary_group_months_day_gone` AFTER DELETE ON `summary_days`
WHEN old.`repo_key` = ''
BEGIN
  DELETE FROM `summary_group_month_heads` WHERE `org_key` = old.`org_key` AND `month` = CAST(strftime('%s', old.`day` * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400;
END;
