#!/bin/sh
# Backups of the patience database: pg_dump's custom format (compressed, restorable table
# by table with pg_restore), one file a run, then retention. The compose `backup` service
# runs it in a loop; `deploy/backup.sh --once` makes one dump and exits. docs/operations.md.
#
#   DATABASE_URL             the database to dump (postgres://user:password@host:port/name)
#   BACKUP_DIR               where dumps go (/backups)
#   BACKUP_KEEP              newest dumps kept whatever their age (14)
#   BACKUP_KEEP_DAYS         older dumps than this many days are deleted, beyond those (30)
#   BACKUP_INTERVAL_SECONDS  between two dumps in the loop (86400)
set -eu

: "${DATABASE_URL:?DATABASE_URL names the database to dump}"
BACKUP_DIR=${BACKUP_DIR:-/backups}
BACKUP_KEEP=${BACKUP_KEEP:-14}
BACKUP_KEEP_DAYS=${BACKUP_KEEP_DAYS:-30}
BACKUP_INTERVAL_SECONDS=${BACKUP_INTERVAL_SECONDS:-86400}

backup_once() {
    mkdir -p "$BACKUP_DIR"
    stamp=$(date -u +%Y%m%dT%H%M%SZ)
    partial="$BACKUP_DIR/.patience-$stamp.dump.partial"
    # Written aside and renamed when complete: a dump that failed half-way is never kept
    # as a backup, nor counted by the retention below.
    pg_dump --format=custom --no-owner --no-privileges --dbname="$DATABASE_URL" --file="$partial"
    mv "$partial" "$BACKUP_DIR/patience-$stamp.dump"
    echo "backup: $BACKUP_DIR/patience-$stamp.dump ($(wc -c <"$BACKUP_DIR/patience-$stamp.dump") bytes)"
    # Retention: the newest BACKUP_KEEP stay; of the rest, those older than BACKUP_KEEP_DAYS go.
    # (The names sort by time: patience-YYYYMMDDTHHMMSSZ.dump.)
    ls -1 "$BACKUP_DIR"/patience-*.dump | sort -r | tail -n +"$((BACKUP_KEEP + 1))" |
        while read -r old; do
            if [ -n "$(find "$old" -mtime +"$BACKUP_KEEP_DAYS")" ]; then
                rm -f "$old"
                echo "backup: deleted $old (past the retention)"
            fi
        done
    rm -f "$BACKUP_DIR"/.patience-*.dump.partial
}

if [ "${1:-}" = "--once" ]; then
    backup_once
    exit 0
fi
while true; do
    backup_once || echo "backup: FAILED, trying again in $BACKUP_INTERVAL_SECONDS s" >&2
    sleep "$BACKUP_INTERVAL_SECONDS"
done
