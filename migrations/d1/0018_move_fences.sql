-- Moves of rows between keys (repository renames, stray keys gathered) against moves of an
-- organization between shards, and against replays of an organization's pending-rename log
-- (issue 31, fourteenth session; storage/renames.ts moveRows). `move_fences`: a move's shards,
-- written before its copy starts; `renames_followed`: the last rename log entry followed here;
-- `analytics_moves.undone_at`: a failed move's undo ended (a new move waits for it).
CREATE TABLE `move_fences` (
	`org_key` text PRIMARY KEY NOT NULL,
	`started_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `renames_followed` (
	`org_key` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `analytics_moves` ADD `undone_at` integer;
--> statement-breakpoint
-- Failed moves undone before this migration (their placement no longer names their target).
UPDATE `analytics_moves` SET `undone_at` = `updated_at` WHERE `state` = 'failed' AND NOT EXISTS (SELECT 1 FROM `analytics_placements` AS p WHERE p.`home_key` = `analytics_moves`.`home_key` AND p.`moving_to` = `analytics_moves`.`to_shard`);
--> statement-breakpoint
-- The check at the head of every move of rows' transaction: inserting a row into this view
-- changes nothing, or aborts the whole transaction with a named error (`renames.ts` reads it).
-- `org_key`, `other_key`: the two keys whose rows move (the same key for a rename); `seq`: the
-- rename log entry the move follows (NULL for a gather).
CREATE VIEW `row_move_checks` AS SELECT NULL AS `org_key`, NULL AS `other_key`, NULL AS `seq`;
--> statement-breakpoint
CREATE TRIGGER `row_move_checks_insert` INSTEAD OF INSERT ON `row_move_checks`
BEGIN
  SELECT RAISE(ABORT, 'row_move_fenced') WHERE EXISTS (SELECT 1 FROM `move_fences` WHERE `org_key` IN (new.`org_key`, new.`other_key`));
  SELECT RAISE(ABORT, 'rename_already_followed') WHERE new.`seq` IS NOT NULL AND EXISTS (SELECT 1 FROM `renames_followed` WHERE `org_key` = new.`org_key` AND `seq` >= new.`seq`);
  INSERT OR REPLACE INTO `renames_followed` (`org_key`, `seq`) SELECT new.`org_key`, new.`seq` WHERE new.`seq` IS NOT NULL;
END;
