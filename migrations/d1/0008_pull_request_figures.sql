ALTER TABLE `pull_requests` ADD `ai_lines` integer;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `posted_findings` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `fixed_findings` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `first_finding_at` integer;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `last_finding_at` integer;--> statement-breakpoint
-- Backfill, added by hand (drizzle-kit generates no data changes): the figures of every stored
-- pull request, as storage/pull-request-figures.ts computes them. Pull requests without posted
-- findings keep the defaults (0, 0, NULL, NULL); without AI-authorship records, ai_lines NULL.
UPDATE `pull_requests` SET `posted_findings` = `f`.`posted`, `fixed_findings` = `f`.`fixed`,
  `first_finding_at` = `f`.`first_at`, `last_finding_at` = `f`.`last_at`
FROM (SELECT `pr_id`, COUNT(*) AS `posted`, SUM(`ai_addressed` = 1) AS `fixed`, MIN(`created_at`) AS `first_at`, MAX(`created_at`) AS `last_at`
  FROM `findings` WHERE `posted` = 1 GROUP BY `pr_id`) AS `f`
WHERE `pull_requests`.`id` = `f`.`pr_id`;--> statement-breakpoint
UPDATE `pull_requests` SET `ai_lines` = CASE WHEN `lines_added` IS NULL AND `lines_deleted` IS NULL THEN `a`.`total`
    ELSE MIN(`a`.`total`, COALESCE(`lines_added`, 0) + COALESCE(`lines_deleted`, 0)) END
FROM (SELECT `pr_id`, SUM(`lines`) AS `total` FROM `ai_authorship` GROUP BY `pr_id`) AS `a`
WHERE `pull_requests`.`id` = `a`.`pr_id`;
