-- Shards (contract section 16): each shard counts its pull request rows and allocates pull request
-- ids `sequence * 1024 + shard index` from a sequence that starts at 2^22, so every allocated id
-- (>= 2^32) lies above the ids stored before shards existed and no two shards allocate the same id.
INSERT INTO `shard_counters` (`one`, `pull_requests`, `next_sequence`)
SELECT 1, (SELECT count(*) FROM `pull_requests`), 4194304;
--> statement-breakpoint
-- An insert also moves the sequence past the row's id (an allocated one, or one kept by a move).
CREATE TRIGGER `shard_counters_pull_request_added` AFTER INSERT ON `pull_requests`
BEGIN
  UPDATE `shard_counters`
  SET `pull_requests` = `pull_requests` + 1, `next_sequence` = max(`next_sequence`, new.`id` / 1024 + 1)
  WHERE `one` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `shard_counters_pull_request_removed` AFTER DELETE ON `pull_requests`
BEGIN
  UPDATE `shard_counters` SET `pull_requests` = `pull_requests` - 1 WHERE `one` = 1;
END;
--> statement-breakpoint
-- Every organization stored before shards existed lives on the main database (only it has rows).
INSERT INTO `analytics_placements` (`home_key`, `shard`)
SELECT DISTINCT `org_key`, 'DB' FROM `pull_requests`;
