"""The admin console under /admin: server-rendered pages for keys with the admin scope."""
