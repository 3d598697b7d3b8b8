# Sourced by the bench scripts: nginx serving the files in $TMP/www (static, sendfile), the
# HTTP ceiling of this machine. start_static_nginx FILE (a file under $TMP/www to wait for)
# sets NPORT and NGPID and adds the pid to PIDS; 1 when nginx is missing or does not start.
# Needs TMP, NCPU and PIDS from the caller.
start_static_nginx() {
  command -v nginx >/dev/null || return 1
  mkdir -p "$TMP/www" "$TMP/logs" "$TMP/tmp"
  chmod o+rx "$TMP" "$TMP/www" && chmod -R o+r "$TMP/www" # workers run as nobody under root
  NPORT=$((20000 + RANDOM % 20000))
  cat > "$TMP/nginx.conf" <<CONF
daemon off;
worker_processes $NCPU;
pid $TMP/nginx.pid;
error_log $TMP/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off; sendfile on; tcp_nopush on;
  client_body_temp_path $TMP/tmp; proxy_temp_path $TMP/tmp; fastcgi_temp_path $TMP/tmp; uwsgi_temp_path $TMP/tmp; scgi_temp_path $TMP/tmp;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:$NPORT; root $TMP/www; location / { } }
}
CONF
  nginx -c "$TMP/nginx.conf" -p "$TMP" > "$TMP/logs/nginx.out" 2>&1 &
  NGPID=$!
  PIDS+=($NGPID)
  for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$NPORT/$1" && return 0; sleep 0.1; done
  return 1
}
