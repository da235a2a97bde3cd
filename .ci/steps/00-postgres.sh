# PostgreSQL must answer at 127.0.0.1:5432 (trust auth, user postgres, database test).
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
if ! pg_up; then
  echo "PostgreSQL is not answering; starting it" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
pg_up || { echo "PostgreSQL did not come up at 127.0.0.1:5432" >&2; exit 1; }
