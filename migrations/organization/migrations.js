import journal from './meta/_journal.json';
import m0000 from './0000_init.sql';
import m0001 from './0001_applied_operations.sql';
import m0002 from './0002_audit_log_and_member_order.sql';
import m0003 from './0003_github_webhooks.sql';
import m0004 from './0004_organization_homes.sql';
import m0005 from './0005_relogin_version.sql';
import m0006 from './0006_sync_runs.sql';
import m0007 from './0007_github_versions.sql';
import m0008 from './0008_sync_progress_at.sql';
import m0009 from './0009_organization_keys.sql';
import m0010 from './0010_seats_follow_the_work.sql';
import m0011 from './0011_pending_renames_log.sql';
import m0012 from './0012_held_logins.sql';

  export default {
    journal,
    migrations: {
      m0000,
m0001,
m0002,
m0003,
m0004,
m0005,
m0006,
m0007,
m0008,
m0009,
m0010,
m0011,
m0012
    }
  }
  