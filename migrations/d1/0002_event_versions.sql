ALTER TABLE `ai_authorship` ADD `updated_at` integer;--> statement-breakpoint
ALTER TABLE `findings` ADD `updated_at` integer;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `updated_at` integer;--> statement-breakpoint
ALTER TABLE `reviews` ADD `updated_at` integer;