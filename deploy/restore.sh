#!/bin/sh
# Restore a dump of deploy/backup.sh into a fresh database: deploy/restore.sh DUMP TARGET_URL
#
# TARGET_URL names an existing, empty database (createdb it first); a database that has
# tables is refused, so a restore never mixes with live data. One transaction: a restore
# that fails leaves the database empty. Then point DATABASE_URL at it and start the
# servers (migrations already applied: the dump has them). docs/operations.md.
set -eu

if [ $# -ne 2 ]; then
    echo "usage: deploy/restore.sh DUMP TARGET_URL" >&2
    exit 2
fi
dump=$1
target=$2

tables=$(psql --no-psqlrc --tuples-only --no-align --dbname="$target" \
    --command="SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
if [ "$tables" != "0" ]; then
    echo "restore: the target database has $tables tables: restore into a fresh one" >&2
    exit 1
fi
pg_restore --exit-on-error --single-transaction --no-owner --no-privileges \
    --dbname="$target" "$dump"
echo "restore: $dump restored"
