CREATE TABLE `ai_authorship` (
	`org_key` text NOT NULL,
	`source_id` text NOT NULL,
	`pr_id` integer NOT NULL,
	`lines` integer NOT NULL,
	PRIMARY KEY(`org_key`, `source_id`)
);
--> statement-breakpoint
CREATE TABLE `findings` (
	`org_key` text NOT NULL,
	`finding_id` text NOT NULL,
	`pr_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	`posted` integer NOT NULL,
	`ai_addressed` integer NOT NULL,
	`feedback` text,
	PRIMARY KEY(`org_key`, `finding_id`)
);
--> statement-breakpoint
CREATE TABLE `pull_requests` (
	`id` integer PRIMARY KEY NOT NULL,
	`org_key` text NOT NULL,
	`repo_key` text NOT NULL,
	`pr_number` integer NOT NULL,
	`repo` text NOT NULL,
	`author` text,
	`created_at` integer,
	`merged_at` integer,
	`lines_added` integer,
	`lines_deleted` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pull_requests_ref` ON `pull_requests` (`org_key`,`repo_key`,`pr_number`);--> statement-breakpoint
CREATE TABLE `reviews` (
	`org_key` text NOT NULL,
	`review_id` text NOT NULL,
	`pr_id` integer NOT NULL,
	`status` text NOT NULL,
	`completed_at` integer,
	PRIMARY KEY(`org_key`, `review_id`)
);
