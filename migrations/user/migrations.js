import journal from './meta/_journal.json';
import m0000 from './0000_init.sql';
import m0001 from './0001_quotas.sql';
import m0002 from './0002_memberships.sql';
import m0003 from './0003_membership_logins.sql';
import m0004 from './0004_membership_installed.sql';
import m0005 from './0005_sessions.sql';
import m0006 from './0006_named_keys.sql';
import m0007 from './0007_oauth_grants.sql';

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
m0007
    }
  }
  