CREATE TABLE `org_review_lag` (
	`org_key` text PRIMARY KEY NOT NULL,
	`max_before_merge` integer NOT NULL,
	`max_after_merge` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ai_authorship_by_pr` ON `ai_authorship` (`pr_id`,`lines`);--> statement-breakpoint
CREATE INDEX `findings_posted_by_pr` ON `findings` (`pr_id`,`created_at`,`ai_addressed`) WHERE posted = 1;--> statement-breakpoint
CREATE INDEX `pull_requests_org_merged` ON `pull_requests` (`org_key`,`merged_at`,`id`,`repo_key`) WHERE merged_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `pull_requests_repo_merged` ON `pull_requests` (`org_key`,`repo_key`,`merged_at`,`id`) WHERE merged_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `reviews_completed_by_pr` ON `reviews` (`pr_id`,`completed_at`) WHERE status = 'completed';