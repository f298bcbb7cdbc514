CREATE TABLE `pull_requests_to_refresh` (
	`pr_id` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
DROP TABLE `org_review_lag`;--> statement-breakpoint
DROP INDEX `findings_posted_by_pr`;--> statement-breakpoint
CREATE INDEX `findings_posted_by_pr_outcome` ON `findings` (`pr_id`,`ai_addressed`,`created_at`) WHERE posted = 1;--> statement-breakpoint
DROP INDEX `pull_requests_org_merged`;--> statement-breakpoint
DROP INDEX `pull_requests_repo_merged`;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `first_reviewed_at` integer;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `last_reviewed_at` integer;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `after_merge_tier` integer;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `before_merge_tier` integer;--> statement-breakpoint
-- Backfill, added by hand (drizzle-kit generates no data changes): the review span of every stored
-- pull request, as storage/review-span.ts computes it (gap tier bounds 1, 2, 4, 8, 32, 128 and 512
-- days), before the indexes below exist so that the update does not maintain them.
UPDATE `pull_requests` SET `first_reviewed_at` = `span`.`first_at`, `last_reviewed_at` = `span`.`last_at`
FROM (SELECT `pr_id`, MIN(`completed_at`) AS `first_at`, MAX(`completed_at`) AS `last_at` FROM `reviews` WHERE `status` = 'completed' GROUP BY `pr_id`) AS `span`
WHERE `pull_requests`.`id` = `span`.`pr_id`;--> statement-breakpoint
UPDATE `pull_requests` SET
  `after_merge_tier` = CASE WHEN last_reviewed_at - merged_at > 0 THEN CASE WHEN last_reviewed_at - merged_at < 86400000 THEN 0 WHEN last_reviewed_at - merged_at < 172800000 THEN 1 WHEN last_reviewed_at - merged_at < 345600000 THEN 2 WHEN last_reviewed_at - merged_at < 691200000 THEN 3 WHEN last_reviewed_at - merged_at < 2764800000 THEN 4 WHEN last_reviewed_at - merged_at < 11059200000 THEN 5 WHEN last_reviewed_at - merged_at < 44236800000 THEN 6 ELSE 7 END END,
  `before_merge_tier` = CASE WHEN merged_at - first_reviewed_at > 0 THEN CASE WHEN merged_at - first_reviewed_at < 86400000 THEN 0 WHEN merged_at - first_reviewed_at < 172800000 THEN 1 WHEN merged_at - first_reviewed_at < 345600000 THEN 2 WHEN merged_at - first_reviewed_at < 691200000 THEN 3 WHEN merged_at - first_reviewed_at < 2764800000 THEN 4 WHEN merged_at - first_reviewed_at < 11059200000 THEN 5 WHEN merged_at - first_reviewed_at < 44236800000 THEN 6 ELSE 7 END END
WHERE `merged_at` IS NOT NULL AND `first_reviewed_at` IS NOT NULL;--> statement-breakpoint
CREATE INDEX `pull_requests_merged_walk` ON `pull_requests` (`org_key`,`merged_at`,`id`,`repo_key`,`first_reviewed_at`,`last_reviewed_at`) WHERE merged_at IS NOT NULL AND first_reviewed_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `pull_requests_repo_merged_walk` ON `pull_requests` (`org_key`,`repo_key`,`merged_at`,`id`,`first_reviewed_at`,`last_reviewed_at`) WHERE merged_at IS NOT NULL AND first_reviewed_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `pull_requests_after_merge_walk` ON `pull_requests` (`org_key`,`after_merge_tier`,`merged_at`,`id`,`repo_key`,`first_reviewed_at`,`last_reviewed_at`) WHERE after_merge_tier IS NOT NULL;--> statement-breakpoint
CREATE INDEX `pull_requests_before_merge_walk` ON `pull_requests` (`org_key`,`before_merge_tier`,`merged_at`,`id`,`repo_key`,`first_reviewed_at`,`last_reviewed_at`) WHERE before_merge_tier IS NOT NULL;--> statement-breakpoint
CREATE INDEX `reviews_completed_by_time` ON `reviews` (`org_key`,`completed_at`,`pr_id`) WHERE status = 'completed';