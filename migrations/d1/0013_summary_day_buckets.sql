-- The day blocks gain each duration's counts per bucket and the durations sorted (issue 31:
-- rules/duration-buckets.ts). Blocks are derived data, built again by the next summary that covers
-- their day, so the table is made anew rather than altered: its columns in the order the summary
-- reads them (the small ones first, the per pull request ones last), which ALTER TABLE cannot give.
-- The triggers of migration 0012 stay: they live on `pull_requests` and name the table, not its columns.
DROP TABLE `summary_days`;
--> statement-breakpoint
CREATE TABLE `summary_days` (
	`org_key` text NOT NULL,
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
	PRIMARY KEY(`org_key`, `day`)
);
