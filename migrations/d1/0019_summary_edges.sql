-- The day's reviews and findings as an isolate keeps them (issue 31, fifteenth session;
-- storage/summary-edges.ts): a block's `edge_version` counts up whenever a completed review or a
-- posted finding of a pull request merged on its day is written (inserted, deleted, or changed in
-- what the summary reads of it: its status or posted flag, its time, its AI-addressed flag, its pull
-- request). A pull request column shows most such writes (and its own triggers then delete the
-- block), but not one between the first and the last. Blocks built before keep 0, which their
-- reviews and findings as stored now are.
ALTER TABLE `summary_days` ADD `edge_version` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
CREATE TRIGGER `summary_days_review_added` AFTER INSERT ON `reviews`
WHEN new.`status` = 'completed'
BEGIN
  UPDATE `summary_days` SET `edge_version` = `edge_version` + 1
  WHERE `org_key` = (SELECT p.`org_key` FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id` AND p.`merged_at` IS NOT NULL)
    AND `repo_key` IN ('', (SELECT p.`repo_key` FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id`))
    AND `day` = (SELECT (p.`merged_at` - (((p.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000 FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_review_removed` AFTER DELETE ON `reviews`
WHEN old.`status` = 'completed'
BEGIN
  UPDATE `summary_days` SET `edge_version` = `edge_version` + 1
  WHERE `org_key` = (SELECT p.`org_key` FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id` AND p.`merged_at` IS NOT NULL)
    AND `repo_key` IN ('', (SELECT p.`repo_key` FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id`))
    AND `day` = (SELECT (p.`merged_at` - (((p.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000 FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_review_changed` AFTER UPDATE ON `reviews`
WHEN (old.`status` = 'completed' OR new.`status` = 'completed') AND (old.`status` IS NOT new.`status` OR old.`completed_at` IS NOT new.`completed_at` OR old.`pr_id` IS NOT new.`pr_id`)
BEGIN
  UPDATE `summary_days` SET `edge_version` = `edge_version` + 1
  WHERE `org_key` = (SELECT p.`org_key` FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id` AND p.`merged_at` IS NOT NULL)
    AND `repo_key` IN ('', (SELECT p.`repo_key` FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id`))
    AND `day` = (SELECT (p.`merged_at` - (((p.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000 FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id`);
  UPDATE `summary_days` SET `edge_version` = `edge_version` + 1
  WHERE `org_key` = (SELECT p.`org_key` FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id` AND p.`merged_at` IS NOT NULL)
    AND `repo_key` IN ('', (SELECT p.`repo_key` FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id`))
    AND `day` = (SELECT (p.`merged_at` - (((p.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000 FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id`)
    AND new.`pr_id` IS NOT old.`pr_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_finding_added` AFTER INSERT ON `findings`
WHEN new.`posted`
BEGIN
  UPDATE `summary_days` SET `edge_version` = `edge_version` + 1
  WHERE `org_key` = (SELECT p.`org_key` FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id` AND p.`merged_at` IS NOT NULL)
    AND `repo_key` IN ('', (SELECT p.`repo_key` FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id`))
    AND `day` = (SELECT (p.`merged_at` - (((p.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000 FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_finding_removed` AFTER DELETE ON `findings`
WHEN old.`posted`
BEGIN
  UPDATE `summary_days` SET `edge_version` = `edge_version` + 1
  WHERE `org_key` = (SELECT p.`org_key` FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id` AND p.`merged_at` IS NOT NULL)
    AND `repo_key` IN ('', (SELECT p.`repo_key` FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id`))
    AND `day` = (SELECT (p.`merged_at` - (((p.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000 FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `summary_days_finding_changed` AFTER UPDATE ON `findings`
WHEN (old.`posted` OR new.`posted`) AND (old.`posted` IS NOT new.`posted` OR old.`created_at` IS NOT new.`created_at` OR old.`ai_addressed` IS NOT new.`ai_addressed` OR old.`pr_id` IS NOT new.`pr_id`)
BEGIN
  UPDATE `summary_days` SET `edge_version` = `edge_version` + 1
  WHERE `org_key` = (SELECT p.`org_key` FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id` AND p.`merged_at` IS NOT NULL)
    AND `repo_key` IN ('', (SELECT p.`repo_key` FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id`))
    AND `day` = (SELECT (p.`merged_at` - (((p.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000 FROM `pull_requests` AS p WHERE p.`id` = old.`pr_id`);
  UPDATE `summary_days` SET `edge_version` = `edge_version` + 1
  WHERE `org_key` = (SELECT p.`org_key` FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id` AND p.`merged_at` IS NOT NULL)
    AND `repo_key` IN ('', (SELECT p.`repo_key` FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id`))
    AND `day` = (SELECT (p.`merged_at` - (((p.`merged_at` % 86400000) + 86400000) % 86400000)) / 86400000 FROM `pull_requests` AS p WHERE p.`id` = new.`pr_id`)
    AND new.`pr_id` IS NOT old.`pr_id`;
END;
