"""Running as one of several nodes on a shared PostgreSQL and Redis (docs/cluster.md)."""
