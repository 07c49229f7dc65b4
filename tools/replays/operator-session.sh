#!/usr/bin/env bash
# An operator's session against an unpacked distribution: three hosts (network namespaces), mutual TLS
# made with `fencekeeper certs`, short client timeouts under load, refused certificates through every
# client, a certificate rotation with SIGHUP, a wiped member started without --join, a member that dies
# as it is added, hostile input and slow requests on the JSON gateway, stream limits, and clean stops.
# Each check prints PASS or FAIL with what was run and what it printed; the exit code is the number of
# FAILs. Everything it creates (namespaces, veths, processes, files) is removed at the end.
#
#   sudo tools/replays/operator-session.sh distribution/target/fencekeeper-<version>.tar.gz
#
# Needs root (ip netns), iproute2, openssl, curl, Java 17 and, for the Node client check, node. Runs in
# about ten minutes on a busy two-core machine. OPSREPLAY_BURN=1 adds a CPU burner to the load (on a
# machine that is otherwise idle); OPSREPLAY_KEEP=1 keeps the work directory. Not part of the Maven
# build; see docs/building.md.
set -u

TARBALL=${1:?usage: $0 fencekeeper-VERSION.tar.gz}
KEEP=${OPSREPLAY_KEEP:-0} # 1: leave the work directory (logs, certificates) for inspection
W=$(mktemp -d /tmp/opsreplay.XXXXXX)
S=$((16 + RANDOM % 200))
NET=10.139.$S
P=fko$((RANDOM % 900 + 100))
FAILS=0
SUMMARY=()
NODE_PIDS=()
BG_PIDS=()
NAMESPACES=()
HOST_VETH=

log() { printf '\n=== %s\n' "$*"; }
show() { printf '  $ %s\n' "$*"; }
pass() { printf '  PASS %s\n' "$*"; SUMMARY+=("PASS $*"); }
fail() { printf '  FAIL %s\n' "$*"; SUMMARY+=("FAIL $*"); FAILS=$((FAILS + 1)); }
check() { # check NAME CONDITION-EXIT-CODE DETAIL
  if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1: $3"; fi
}
ms() { date +%s%3N; }

cleanup() {
  set +e
  for pid in "${BG_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${NODE_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
  wait 2>/dev/null
  for ns in "${NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null; done
  [ -n "$HOST_VETH" ] && ip link del "$HOST_VETH" 2>/dev/null
  if [ "$KEEP" = 1 ]; then echo "work directory kept: $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------------
log "unpack $TARBALL"
mkdir -p "$W/opt"
tar -xzf "$TARBALL" -C "$W/opt" || exit 2
DIST=$(echo "$W"/opt/fencekeeper-*)
FK="$DIST/bin/fencekeeper"
echo "  $DIST"

log "three hosts: namespaces $P-n1..n4 on a bridge, $NET.0/24, this shell at $NET.1"
ip netns add "$P-br" && NAMESPACES+=("$P-br")
ip -n "$P-br" link set lo up
ip -n "$P-br" link add br0 type bridge
ip -n "$P-br" link set br0 up
HOST_VETH=${P}h
ip link add "$HOST_VETH" type veth peer name "${P}hb"
ip link set "${P}hb" netns "$P-br"
ip addr add "$NET.1/24" dev "$HOST_VETH"
ip link set "$HOST_VETH" up
ip -n "$P-br" link set "${P}hb" master br0
ip -n "$P-br" link set "${P}hb" up
for i in 1 2 3 4; do
  ns=$P-n$i
  ip netns add "$ns" && NAMESPACES+=("$ns")
  ip -n "$ns" link set lo up
  ip link add "${P}i$i" type veth peer name "${P}o$i"
  ip link set "${P}i$i" netns "$ns"
  ip link set "${P}o$i" netns "$P-br"
  ip -n "$ns" addr add "$NET.1$i/24" dev "${P}i$i"
  ip -n "$ns" link set "${P}i$i" up
  ip -n "$P-br" link set "${P}o$i" master br0
  ip -n "$P-br" link set "${P}o$i" up
done
# n1 also answers on $NET.21, a name its certificate does not carry (the name-mismatch check).
ip -n "$P-n1" addr add "$NET.21/24" dev "${P}i1"

log "certificates as docs/security.md makes them"
show "fencekeeper certs $W/certs --san $NET.11,$NET.12,$NET.13"
"$FK" certs "$W/certs" --san "$NET.11,$NET.12,$NET.13" || exit 2
"$FK" certs "$W/certs" --add node4 --cn fencekeeper-node --san "$NET.14" >/dev/null || exit 2
# A foreign CA's client, trusting our CA for the node: only its own certificate is wrong.
"$FK" certs "$W/foreign-ca" >/dev/null || exit 2
mkdir -p "$W/foreign"
cp "$W/foreign-ca/client.crt" "$W/foreign-ca/client.key" "$W/certs/ca.crt" "$W/foreign/"
# An expired client certificate from our own CA (openssl: `certs` only issues valid ones).
mkdir -p "$W/expired" "$W/ossl/new"
cp "$W/certs/ca.crt" "$W/expired/"
touch "$W/ossl/index.txt"
cat >"$W/ossl/ca.cnf" <<EOF
[ca]
default_ca = opsreplay
[opsreplay]
dir = $W/ossl
database = \$dir/index.txt
new_certs_dir = \$dir/new
serial = \$dir/serial
default_md = sha256
policy = any
x509_extensions = client
[any]
commonName = supplied
[client]
basicConstraints = CA:FALSE
keyUsage = digitalSignature
extendedKeyUsage = clientAuth
EOF
echo 1000 >"$W/ossl/serial"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$W/expired/client.key" 2>/dev/null
openssl req -new -key "$W/expired/client.key" -subj /CN=fencekeeper-client -out "$W/ossl/client.csr"
openssl ca -batch -config "$W/ossl/ca.cnf" -cert "$W/certs/ca.crt" -keyfile "$W/certs/ca.key" \
  -startdate 20250101000000Z -enddate 20250201000000Z -in "$W/ossl/client.csr" \
  -out "$W/expired/client.crt" >/dev/null 2>&1 || { echo "openssl ca failed"; exit 2; }
show "openssl x509 -in expired/client.crt -noout -enddate"
openssl x509 -in "$W/expired/client.crt" -noout -enddate | sed 's/^/  /'
# No client certificate: the CA alone.
mkdir -p "$W/nocert" && cp "$W/certs/ca.crt" "$W/nocert/"

export FENCEKEEPER_ENDPOINTS="$NET.11:7501,$NET.12:7501,$NET.13:7501"
export FENCEKEEPER_TLS_CERTS="$W/certs"
C=(--cacert "$W/certs/ca.crt" --cert "$W/certs/client.crt" --key "$W/certs/client.key")

node_conf() { # node_conf I [STORAGE]
  local i=$1 dir=$W/n$1
  mkdir -p "$dir/tls" "$dir/log"
  local cert=node
  [ "$i" = 4 ] && cert=node4
  cp "$W/certs/ca.crt" "$dir/tls/ca.crt"
  cp "$W/certs/$cert.crt" "$dir/tls/node.crt"
  cp "$W/certs/$cert.key" "$dir/tls/node.key"
  local peers="n1@$NET.11:7301,n2@$NET.12:7301,n3@$NET.13:7301"
  # A node that joins lists itself too (docs/operations.md, "Replace a node").
  [ "$i" = 4 ] && peers="$peers,n4@$NET.14:7301"
  cat >"$dir/fencekeeper.properties" <<EOF
node.id=n$i
peers=$peers
storage.dir=$dir/data
log.dir=$dir/log
metrics.port=9301
tls.cert=$dir/tls/node.crt
tls.key=$dir/tls/node.key
tls.trust=$dir/tls/ca.crt
authz.admins=fencekeeper-admin
limits.watches-per-client.max=3
limits.sessions-per-client.max=2
EOF
  if [ "$i" = 1 ]; then
    printf 'client.bind=0.0.0.0\nhttp.bind=0.0.0.0\n' >>"$dir/fencekeeper.properties"
  fi
}

declare -A PID
start_node() { # start_node I [--join]
  local i=$1
  shift
  ip netns exec "$P-n$i" "$FK" server --config "$W/n$i/fencekeeper.properties" "$@" \
    >>"$W/n$i/stdout" 2>>"$W/n$i/stderr" &
  PID[$i]=$!
  NODE_PIDS+=("$!")
}
STOP_RC=
stop_node() { # SIGTERM, wait for the exit; its code in STOP_RC
  local i=$1
  kill -TERM "${PID[$i]}" 2>/dev/null
  wait "${PID[$i]}"
  STOP_RC=$?
}
wait_ready() { # wait_ready I [SECONDS]
  local deadline=$(($(date +%s) + ${2:-60}))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    [ "$(curl -s -m 2 "http://$NET.1$1:9301/health")" = ready ] && return 0
    sleep 0.5
  done
  return 1
}
leader() { "$FK" status --json 2>/dev/null | sed -n 's/.*"leaderId":"\(n[0-9]\)".*/\1/p' | head -1; }

# ---------------------------------------------------------------------------------------------------
log "start n1, n2, n3 (fencekeeper server --config …)"
for i in 1 2 3; do node_conf $i && start_node $i; done
for i in 1 2 3; do wait_ready $i 90 || { echo "n$i not ready"; tail -20 "$W/n$i/stderr"; exit 2; }; done
show "fencekeeper status"
"$FK" status | sed 's/^/  /'

# ---------------------------------------------------------------------------------------------------
log "1. short --timeout under load: one result per call, exit code as the cluster applied"
show "fencekeeper lease acquire tw --ttl 30m -q"
TOKEN=$("$FK" lease acquire tw --ttl 30m -q)
echo "  token $TOKEN"
(while :; do "$FK" write tw load v --token "$TOKEN" --timeout 4s >/dev/null 2>&1; done) &
BG_PIDS+=("$!")
if [ "${OPSREPLAY_BURN:-0}" = 1 ]; then # a CPU burner too, on a machine otherwise idle
  (while :; do :; done) &
  BG_PIDS+=("$!")
fi
# The key's version through the gateway (curl -L follows a follower's redirect to the leader): a
# linearizable read that costs no JVM start, so the check does not add to the load it measures.
version() {
  curl -sL -m 20 "${C[@]}" "https://$NET.11:7601/v1/values/read" -d '{"resource":"tw","key":"'"$1"'"}' |
    sed -n 's/.*"version":"\{0,1\}\([0-9]*\).*/\1/p'
}
one_result_write() { # one_result_write TIMEOUT N
  local to=$1 n=$2 bad=0 applied_ok=0 unavail=0 unavail_applied=0 i out rc before after lines
  for i in $(seq 1 "$n"); do
    before=$(version k)
    out=$("$FK" write tw k "v$i" --token "$TOKEN" --timeout "$to" --json 2>/dev/null)
    rc=$?
    after=$(version k)
    lines=$(printf '%s\n' "$out" | grep -c .)
    [ "$i" = 1 ] && { show "write tw k v1 --token $TOKEN --timeout $to --json"; echo "  $out  (exit $rc)"; }
    if [ "$lines" != 1 ]; then
      bad=$((bad + 1)); echo "  $lines results: $out"
    elif [ $rc = 0 ]; then
      if [ "$after" = $((${before:-0} + 1)) ]; then applied_ok=$((applied_ok + 1)); else
        bad=$((bad + 1)); echo "  exit 0 but version $before -> $after"; fi
    elif [ $rc = 11 ]; then
      unavail=$((unavail + 1))
      [ "${after:-0}" != "${before:-0}" ] && unavail_applied=$((unavail_applied + 1))
      printf '%s' "$out" | grep -q 'may or may not have been applied' || { bad=$((bad + 1)); echo "  $out"; }
    else
      bad=$((bad + 1)); echo "  exit $rc: $out"
    fi
  done
  echo "  --timeout $to: $applied_ok ACCEPTED and applied, $unavail UNAVAILABLE ($unavail_applied of them applied), $bad wrong"
  check "1 write --timeout $to: one result per call, exit 0 only when applied" "$bad" "$bad calls wrong"
}
one_result_status() { # one_result_status TIMEOUT N
  local to=$1 n=$2 bad=0 ok=0 i out rc
  for i in $(seq 1 "$n"); do
    out=$("$FK" status --timeout "$to" --json 2>/dev/null)
    rc=$?
    [ "$(printf '%s\n' "$out" | grep -c .)" = 1 ] || { bad=$((bad + 1)); echo "  json: $out"; }
    if [ $rc = 0 ]; then ok=$((ok + 1)); elif printf '%s' "$out" | grep -q 'may or may not'; then
      bad=$((bad + 1)); echo "  a read talks of changes: $out"; fi
    out=$("$FK" status --timeout "$to" 2>/dev/null)
    rc=$?
    if printf '%s' "$out" | grep -q '^UNAVAILABLE' && printf '%s' "$out" | grep -q 'LEADER'; then
      bad=$((bad + 1)); echo "  text: table and UNAVAILABLE: $out"
    fi
    [ "$i" = 1 ] && { show "status --timeout $to"; printf '%s\n' "$out" | sed 's/^/  /'; echo "  (exit $rc)"; }
  done
  echo "  status --timeout $to: $ok of $n json calls OK, $bad wrong"
  check "1 status --timeout $to: one result per call (json and text)" "$bad" "$bad calls wrong"
}
one_result_write 4s 4
one_result_write 1s 3
one_result_write 300ms 3
one_result_status 3500ms 2
one_result_status 1s 2
one_result_status 300ms 2
bad=0
for to in 3s 1s 300ms; do
  out=$("$FK" lease show tw --timeout "$to" --json 2>/dev/null)
  rc=$?
  show "lease show tw --timeout $to --json"
  echo "  $out  (exit $rc)"
  [ "$(printf '%s\n' "$out" | grep -c .)" = 1 ] || bad=$((bad + 1))
  printf '%s' "$out" | grep -q 'may or may not' && bad=$((bad + 1))
done
check "1 lease show with short timeouts: one result, a timed-out read says nothing of changes" "$bad" "see above"
for pid in "${BG_PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
BG_PIDS=()

# ---------------------------------------------------------------------------------------------------
log "2. refused handshakes: expired client certificate, foreign CA, no client certificate, name mismatch"
# The same verb with good certificates, for what the JVM's start costs on this machine just now: a
# refused call must not take much longer than an answered one.
t0=$(ms)
"$FK" lease show tw --json >/dev/null 2>&1
BASELINE=$(($(ms) - t0))
echo "  an answered call (lease show) took $BASELINE ms including the JVM's start"
refused_cli() { # refused_cli NAME ARGS...
  local name=$1 t0 t1 out rc
  shift
  t0=$(ms)
  out=$("$FK" "$@" --json 2>&1)
  rc=$?
  t1=$(ms)
  show "fencekeeper $* --json"
  echo "  $out  (exit $rc, $((t1 - t0)) ms including the JVM's start)"
  local why=""
  [ $rc = 19 ] || why="exit $rc, not 19;"
  printf '%s' "$out" | grep -q 'nothing was applied' || why="$why no 'nothing was applied';"
  [ $((t1 - t0)) -lt $((BASELINE + 1500)) ] || why="$why took $((t1 - t0)) ms;"
  [ "$(printf '%s\n' "$out" | grep -c .)" = 1 ] || why="$why not one line;"
  check "2 CLI $name: PERMISSION_DENIED at once, naming the cause, nothing applied" "${#why}" "$why"
}
refused_cli "expired client certificate" write tw k x --token "$TOKEN" --tls --certs "$W/expired"
refused_cli "foreign CA" write tw k x --token "$TOKEN" --tls --certs "$W/foreign"
# The command line always presents a certificate: a directory without one is a usage error that
# names the file (the Node client and curl below send none).
out=$("$FK" write tw k x --token "$TOKEN" --tls --certs "$W/nocert" --json 2>&1)
rc=$?
show "fencekeeper write tw k x --token $TOKEN --tls --certs nocert --json"
echo "  $out  (exit $rc)"
[ $rc = 2 ] && printf '%s' "$out" | grep -q 'client.crt'
check "2 CLI without a client certificate: usage error naming the file, nothing sent" $? "exit $rc"
refused_cli "name mismatch" write tw k x --token "$TOKEN" --endpoints "$NET.21:7501"
refused_cli "expired, status" status --tls --certs "$W/expired"
show "fencekeeper status --tls --certs expired   (text)"
out=$("$FK" status --tls --certs "$W/expired" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  /'
[ $rc = 19 ] && printf '%s' "$out" | tail -1 | grep -q '^PERMISSION_DENIED: .*nothing was applied'
check "2 CLI status (text) with an expired certificate: PERMISSION_DENIED, exit 19" $? "exit $rc"

cat >"$W/JavaRefused.java" <<'EOF'
import dev.fencekeeper.client.FencingClient;
import java.nio.file.Path;
import java.time.Duration;

public class JavaRefused {
  public static void main(String[] a) throws Exception {
    FencingClient.Builder b = FencingClient.builder().endpoints(a[0]);
    b.tls(Path.of(a[1], "client.crt"), Path.of(a[1], "client.key"), Path.of(a[1], "ca.crt"));
    try (FencingClient c = b.build()) {
      long t0 = System.nanoTime();
      var r = c.acquireToken("java-refused", Duration.ofSeconds(30), "java");
      System.out.println(r.code() + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + r.message());
    } catch (Exception e) {
      System.out.println("threw " + e);
    }
  }
}
EOF
mkdir -p "$W/nocert-java" && cp "$W/certs/ca.crt" "$W/nocert-java/"
java_refused() { # java_refused NAME ENDPOINTS DIR
  local out ms_
  show "java JavaRefused.java $2 $3 (FencingClient.builder().tls(…).build().acquireToken(…))"
  out=$(java -cp "$DIST/lib/fencekeeper-"*.jar "$W/JavaRefused.java" "$2" "$3" 2>/dev/null | tail -1)
  echo "  $out"
  ms_=$(printf '%s' "$out" | sed -n 's/^PERMISSION_DENIED in \([0-9]*\) ms.*/\1/p')
  local why=""
  [ -n "$ms_" ] || why="not PERMISSION_DENIED;"
  [ -n "$ms_" ] && [ "$ms_" -gt 2000 ] && why="$why took $ms_ ms;"
  printf '%s' "$out" | grep -q 'nothing was applied' || why="$why no 'nothing was applied';"
  check "2 Java client $1" "${#why}" "$why"
}
java_refused "expired client certificate" "$FENCEKEEPER_ENDPOINTS" "$W/expired"
java_refused "foreign CA" "$FENCEKEEPER_ENDPOINTS" "$W/foreign"
java_refused "name mismatch" "$NET.21:7501" "$W/certs"

NODE_PKG=$(ls "$DIST"/clients/node/fencekeeper-client-*.tgz 2>/dev/null | head -1)
if command -v node >/dev/null && [ -n "$NODE_PKG" ]; then
  show "npm install $NODE_PKG   (into $W/node-app)"
  mkdir -p "$W/node-app"
  (cd "$W/node-app" && npm install --silent --no-audit --no-fund "$NODE_PKG" >/dev/null 2>&1) ||
    echo "  npm install failed"
  cat >"$W/node-app/refused.mjs" <<EOF
import { connect } from '@fencekeeper/client';
const [endpoints, dir, withCert] = process.argv.slice(2);
const tls = { caFile: dir + '/ca.crt' };
if (withCert === 'yes') { tls.certFile = dir + '/client.crt'; tls.keyFile = dir + '/client.key'; }
const t0 = Date.now();
try {
  const c = await connect({ endpoints: endpoints.split(','), tls });
  const l = await c.acquire('node-refused', { ttlMs: 30000 });
  console.log('GRANTED ' + l.token);
} catch (e) {
  console.log((e.code ?? e.name) + ' in ' + (Date.now() - t0) + ' ms: ' + e.message);
}
process.exit(0);
EOF
  node_refused() { # node_refused NAME ENDPOINTS DIR yes|no
    local out ms_
    show "node refused.mjs $2 $3 (connect({tls}) then acquire)"
    out=$(cd "$W/node-app" && timeout 30 node refused.mjs "$2" "$3" "$4" 2>&1 | tail -1)
    echo "  $out"
    ms_=$(printf '%s' "$out" | sed -n 's/^PERMISSION_DENIED in \([0-9]*\) ms.*/\1/p')
    local why=""
    [ -n "$ms_" ] || why="not PERMISSION_DENIED;"
    [ -n "$ms_" ] && [ "$ms_" -gt 2000 ] && why="$why took $ms_ ms;"
    printf '%s' "$out" | grep -q 'nothing was applied' || why="$why no 'nothing was applied';"
    check "2 Node client $1" "${#why}" "$why"
  }
  node_refused "expired client certificate" "$FENCEKEEPER_ENDPOINTS" "$W/expired" yes
  node_refused "foreign CA" "$FENCEKEEPER_ENDPOINTS" "$W/foreign" yes
  node_refused "no client certificate" "$FENCEKEEPER_ENDPOINTS" "$W/nocert" no
  node_refused "name mismatch" "$NET.21:7501" "$W/certs" yes
else
  fail "2 Node client: node, or the npm package in $DIST/clients/node, missing"
fi

curl_refused() { # curl_refused NAME URL CURL-ARGS...
  local name=$1 url=$2 t0 t1 out rc
  shift 2
  t0=$(ms)
  out=$(curl -sS -m 10 "$@" "$url" -d '{"resource":"tw","token":"'"$TOKEN"'","key":"k","value":"eA=="}' 2>&1)
  rc=$?
  t1=$(ms)
  show "curl $* $url"
  echo "  $out  (exit $rc, $((t1 - t0)) ms)"
  local why=""
  [ $rc = 0 ] && why="answered;"
  [ $((t1 - t0)) -lt 1500 ] || why="$why took $((t1 - t0)) ms;"
  check "2 gateway $name: refused at the handshake" "${#why}" "$why"
}
curl_refused "expired client certificate" "https://$NET.11:7601/v1/values/write" \
  --cacert "$W/certs/ca.crt" --cert "$W/expired/client.crt" --key "$W/expired/client.key"
curl_refused "foreign CA" "https://$NET.11:7601/v1/values/write" \
  --cacert "$W/certs/ca.crt" --cert "$W/foreign/client.crt" --key "$W/foreign/client.key"
curl_refused "no client certificate" "https://$NET.11:7601/v1/values/write" --cacert "$W/certs/ca.crt"
curl_refused "name mismatch" "https://$NET.21:7601/v1/values/write" "${C[@]}"

show "curl http://$NET.11:9301/metrics | grep fencekeeper_tls_handshakes_refused_total"
curl -s "http://$NET.11:9301/metrics" | grep '^fencekeeper_tls_handshakes_refused_total' | sed 's/^/  /'
for l in client http; do
  for r in expired untrusted no_certificate; do
    v=$(curl -s "http://$NET.1$((1)):9301/metrics" |
      sed -n "s/^fencekeeper_tls_handshakes_refused_total{listener=\"$l\",reason=\"$r\",*} \([0-9.]*\)$/\1/p")
    [ -n "$v" ] && [ "${v%.*}" -gt 0 ]
    check "2 n1 counts $l refusals for $r" $? "fencekeeper_tls_handshakes_refused_total{listener=$l,reason=$r} is '${v}'"
  done
done
show "grep 'TLS: the .* port refused' n1/log/fencekeeper.log"
grep 'TLS: the .* port refused' "$W/n1/log/fencekeeper.log" | head -5 | cut -c1-240 | sed 's/^/  /'
# At most one WARN line per port every 10 s.
close=$(grep 'TLS: the client port refused' "$W/n1/log/fencekeeper.log" | cut -c12-19 |
  awk -F: '{ t = $1 * 3600 + $2 * 60 + $3; if (NR > 1 && t - p < 10) n++; p = t } END { print n + 0 }')
n=$(grep -c 'TLS: the client port refused' "$W/n1/log/fencekeeper.log")
[ "$n" -ge 1 ] && [ "$close" = 0 ]
check "2 n1 logs client-port refusals, at most one line per 10 s" $? "$n lines, $close within 10 s of the previous"
v=$(curl -s "http://$NET.11:9301/metrics" |
  sed -n 's/^fencekeeper_tls_handshakes_refused_total{listener="client",reason="abandoned",*} \([0-9.]*\)$/\1/p')
[ -n "$v" ] && [ "${v%.*}" -gt 0 ]
check "2 n1 counts the name mismatches the clients gave up as abandoned" $? "abandoned is '$v'"
n=$(grep -h 'TLS: the raft port refused' "$W"/n[123]/log/fencekeeper.log | grep -c .)
[ "$n" = 0 ]
check "2 no node logged a refusal on the Raft port (its peers all hold good certificates)" $? "$n lines"
grep -q 'TLS: the gateway\|TLS: the http\|TLS: the JSON gateway' "$W/n1/log/fencekeeper.log"
check "2 n1 logs gateway refusals" $? "no gateway refusal line"

# ---------------------------------------------------------------------------------------------------
log "3. rotate n2's certificate (new serial) and SIGHUP it"
"$FK" certs "$W/certs" --add node2new --cn fencekeeper-node --san "$NET.11,$NET.12,$NET.13" >/dev/null
NEW=$(openssl x509 -in "$W/certs/node2new.crt" -noout -serial | cut -d= -f2)
OLD=$(openssl x509 -in "$W/n2/tls/node.crt" -noout -serial | cut -d= -f2)
echo "  old serial $OLD, new serial $NEW"
cp "$W/certs/node2new.crt" "$W/n2/tls/node.crt"
cp "$W/certs/node2new.key" "$W/n2/tls/node.key"
show "kill -HUP ${PID[2]}"
kill -HUP "${PID[2]}"
sleep 2
grep 'SIGHUP' "$W/n2/log/fencekeeper.log" | tail -1 | cut -c1-240 | sed 's/^/  /'
for port in 7301 7501 7601; do
  served=$(openssl s_client -connect "$NET.12:$port" -cert "$W/certs/client.crt" -key "$W/certs/client.key" \
    -CAfile "$W/certs/ca.crt" </dev/null 2>/dev/null | openssl x509 -noout -serial | cut -d= -f2)
  show "openssl s_client -connect $NET.12:$port … | openssl x509 -noout -serial"
  echo "  $served"
  [ "$served" = "$NEW" ]
  check "3 n2 port $port serves the new serial" $? "serves '$served'"
done
NOT_AFTER=$(date -d "$(openssl x509 -in "$W/n2/tls/node.crt" -noout -enddate | cut -d= -f2)" +%s)
show "curl http://$NET.12:9301/metrics | grep fencekeeper_tls_certificate_expiry_seconds"
curl -s "http://$NET.12:9301/metrics" | grep '^fencekeeper_tls_certificate_expiry_seconds' | sed 's/^/  /'
for l in raft client http; do
  v=$(curl -s "http://$NET.12:9301/metrics" |
    sed -n "s/^fencekeeper_tls_certificate_expiry_seconds{listener=\"$l\",*} \([0-9.eE+]*\)$/\1/p")
  d=$(awk -v v="${v:-0}" -v n="$NOT_AFTER" -v now="$(date +%s)" 'BEGIN { d = now + v - n; print (d < 0 ? -d : d) < 120 ? 0 : 1 }')
  check "3 n2 expiry gauge for $l describes the new certificate" "$d" "value '${v}'"
done
"$FK" status >/dev/null 2>&1
check "3 the cluster still serves after the rotation" $? "status failed"

# ---------------------------------------------------------------------------------------------------
log "4. wipe n3 and start it without --join"
stop_node 3
echo "  n3 stopped (SIGTERM), exit $STOP_RC"
show "rm -rf $W/n3/data"
mv "$W/n3/data" "$W/n3-data-kept"
show "fencekeeper server --config n3.properties   (no --join)"
t0=$(ms)
start_node 3
wait "${PID[3]}"
rc=$?
echo "  exit $rc after $(($(ms) - t0)) ms; stderr:"
sed 's/^/  | /' "$W/n3/stderr" | tail -3
last=$(grep -v '^\s*$' "$W/n3/stderr" | tail -1)
printf '%s' "$last" | grep -q 'refused to start' && printf '%s' "$last" | grep -q -- '--join' &&
  printf '%s' "$last" | grep -q 'members remove'
r=$?
[ $rc = 23 ] && [ $r = 0 ]
check "4 wiped n3 without --join refused (exit 23, one line naming the way back)" $? "exit $rc: $last"
out=$("$FK" status --json 2>/dev/null)
printf '%s' "$out" | grep -q '"id":"n3"[^}]*"unreachable\|n3[^}]*unreachable\|"id":"n3","error'
check "4 status shows n3 unreachable (it cannot vote)" $? "$(printf '%s' "$out" | cut -c1-300)"
: >"$W/n3/stderr"

log "4. the documented way back: members remove n3, server --join, members add n3"
show "fencekeeper members remove n3"
"$FK" members remove n3 2>&1 | sed 's/^/  /'
start_node 3 --join
sleep 3
show "fencekeeper members add n3=$NET.13:7301"
out=$("$FK" members add "n3=$NET.13:7301" 2>&1)
rc=$?
echo "$out" | sed 's/^/  /'
[ $rc = 0 ] && printf '%s' "$out" | grep -q '^ADDED n3'
check "4 members add n3 after --join: ADDED" $? "exit $rc"
wait_ready 3 60
check "4 n3 ready again" $? "/health not ready"

log "4. a storage of another cluster, and status over two clusters"
mkdir -p "$W/other/log"
cat >"$W/other/fencekeeper.properties" <<EOF
node.id=n3
peers=n3@$NET.13:8301
storage.dir=$W/other/data
log.dir=$W/other/log
client.port=8501
http.port=0
tls.cert=$W/n3/tls/node.crt
tls.key=$W/n3/tls/node.key
tls.trust=$W/n3/tls/ca.crt
authz.admins=fencekeeper-admin
EOF
ip netns exec "$P-n3" "$FK" server --config "$W/other/fencekeeper.properties" >"$W/other/stdout" 2>"$W/other/stderr" &
OTHER=$!
NODE_PIDS+=("$OTHER")
for _ in $(seq 1 60); do "$FK" status --endpoints "$NET.13:8501" >/dev/null 2>&1 && break; sleep 1; done
show "fencekeeper status --endpoints $NET.11:7501,$NET.12:7501,$NET.13:8501"
out=$("$FK" status --endpoints "$NET.11:7501,$NET.12:7501,$NET.13:8501" 2>&1)
rc=$?
echo "$out" | sed 's/^/  /'
[ $rc = 23 ] && printf '%s' "$out" | grep -q 'cluster ids differ'
check "4 status over two clusters says so (exit 23)" $? "exit $rc"
kill -TERM "$OTHER"
wait "$OTHER"
stop_node 3
echo "  n3 stopped (SIGTERM), exit $STOP_RC"
mv "$W/n3/data" "$W/n3-data-member"
cp -a "$W/other/data" "$W/n3/data"
: >"$W/n3/stderr"
show "fencekeeper server --config n3.properties   (storage of another cluster)"
start_node 3
wait "${PID[3]}"
rc=$?
last=$(grep -v '^\s*$' "$W/n3/stderr" | tail -1)
echo "  exit $rc: $last"
[ $rc = 23 ] && printf '%s' "$last" | grep -q 'belongs to cluster'
check "4 n3 with another cluster's storage refused (exit 23, naming both ids)" $? "exit $rc"
rm -rf "$W/n3/data"
mv "$W/n3-data-member" "$W/n3/data"
: >"$W/n3/stderr"
start_node 3 --join
wait_ready 3 60
check "4 n3 back on its own storage (with --join, as its unit keeps it)" $? "/health not ready"

# ---------------------------------------------------------------------------------------------------
log "5. members add of a node that dies right away"
node_conf 4
start_node 4 --join
sleep 3
show "fencekeeper members add n4=$NET.14:7301   (n4 killed -9 as soon as it holds the group)"
t0=$(ms)
"$FK" members add "n4=$NET.14:7301" --json >"$W/add4.out" 2>&1 &
ADD=$!
# The group's directory appears in n4's storage when the command created it there: n4 dies then.
deadline=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt "$deadline" ] && kill -0 "${PID[4]}" 2>/dev/null; do
  [ -n "$(find "$W/n4/data" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ] && break
  sleep 0.05
done
echo "  n4 holds the group after $(($(ms) - t0)) ms; kill -9"
kill -9 "${PID[4]}"
wait "$ADD"
rc=$?
echo "  $(cat "$W/add4.out")  (exit $rc, $(($(ms) - t0)) ms)"
! grep -q '"status":"ADDED"\|^ADDED' "$W/add4.out" && [ $rc = 11 ]
check "5 members add of a dead node is not reported ADDED" $? "exit $rc"
"$FK" members list 2>&1 | grep -q 'n4' && { show "fencekeeper members remove n4"; "$FK" members remove n4 2>&1 | sed 's/^/  /'; }

# ---------------------------------------------------------------------------------------------------
log "6. the gateway: invalid UTF-8, a trickled request line"
GW=https://$NET.11:7601
L=$(leader)
LGW=https://$NET.1${L#n}:7601
keys_before=$("$FK" keys list tw --json 2>/dev/null)
t64=$(printf 'k\xff\xfe' | base64)
show "curl -X POST $LGW/v1/values/write --data-binary '{\"resource\":\"tw\",…,\"key\":\"k<ff fe>\"…}'"
printf '{"resource":"tw","token":"%s","key":"k\xff\xfe","value":"eA=="}' "$TOKEN" >"$W/bad1.json"
out=$(curl -s -w ' HTTP %{http_code}' "${C[@]}" "$LGW/v1/values/write" --data-binary @"$W/bad1.json")
echo "  $out"
case "$out" in *'HTTP 400') r=0 ;; *) r=1 ;; esac
check "6 write with key bytes ff fe: 400" $r "$out"
[ "$("$FK" keys list tw --json 2>/dev/null)" = "$keys_before" ]
check "6 nothing written" $? "keys of tw changed"
printf '{"resource":"inv\xed\xa0\x80utf8","ttlMs":30000}' >"$W/bad2.json"
show "curl -X POST $LGW/v1/leases/acquire --data-binary '{\"resource\":\"inv<ed a0 80>utf8\",…}'"
out=$(curl -s -w ' HTTP %{http_code}' "${C[@]}" "$LGW/v1/leases/acquire" --data-binary @"$W/bad2.json")
echo "  $out"
case "$out" in *'HTTP 400') r=0 ;; *) r=1 ;; esac
check "6 acquire of a name with an encoded surrogate: 400" $r "$out"
"$FK" leases list --prefix inv 2>/dev/null | grep -q inv
[ $? != 0 ]
check "6 no lease on inv…" $? "a lease was granted"

show "one byte of 'POST /v1/node/status HTTP/1.1' every 2 s to $GW"
t0=$(ms)
out=$( (for c in P O S T ' ' / v 1 / n o d e / s t a t u s; do printf '%s' "$c"; sleep 2; done) |
  timeout 40 openssl s_client -quiet -connect "$NET.11:7601" -cert "$W/certs/client.crt" \
    -key "$W/certs/client.key" -CAfile "$W/certs/ca.crt" 2>/dev/null | head -1)
el=$(($(ms) - t0))
echo "  after $el ms: $out"
printf '%s' "$out" | grep -q '408' && [ $el -lt 14000 ]
check "6 a trickled request line: 408 and closed within the 10 s limit" $? "after $el ms: $out"

# ---------------------------------------------------------------------------------------------------
log "7. stream limits (limits.watches-per-client.max=3, limits.sessions-per-client.max=2 in this replay)"
L=$(leader)
LGW=https://$NET.1${L#n}:7601
for i in 1 2 3; do
  curl -sN "${C[@]}" "$LGW/v1/leases/watch" -d '{"resource":"w","afterSeq":2147483647,"timeoutMs":20000}' \
    >"$W/watch$i.out" 2>&1 &
  BG_PIDS+=("$!")
done
sleep 2
out=$(curl -s -w ' HTTP %{http_code}' "${C[@]}" "$LGW/v1/leases/watch" -d '{"resource":"w","afterSeq":2147483647,"timeoutMs":1000}')
show "a 4th watch"
echo "  $out"
case "$out" in *'HTTP 429') r=0 ;; *) r=1 ;; esac
check "7 the 4th watch of one identity: 429 naming the limit" $r "$out"
for i in 1 2; do
  (printf '{"open":{"sessionId":"opsreplay-session-%02d-0123456789"}}\n' "$i"; sleep 8) |
    curl -sN -X POST -T - -H 'Content-Type: application/x-ndjson' "${C[@]}" "$LGW/v1/session" >"$W/session$i.out" 2>&1 &
  BG_PIDS+=("$!")
done
sleep 3
out=$( (printf '{"open":{"sessionId":"opsreplay-session-03-0123456789"}}\n'; sleep 2) |
  curl -sN -X POST -T - -w ' HTTP %{http_code}' -H 'Content-Type: application/x-ndjson' "${C[@]}" "$LGW/v1/session")
show "a 3rd session"
echo "  $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300)"
printf '%s' "$out" | grep -q 'OVERLOADED\|HTTP 429'
check "7 the 3rd session of one identity: refused OVERLOADED" $? "$out"
# curl sends a streamed body when it ends, so the two sessions' answers are read once they closed.
for i in 1 2; do wait "${BG_PIDS[$((i + 2))]}" 2>/dev/null; done
echo "  sessions 1, 2: $(head -c 150 "$W/session1.out") | $(head -c 150 "$W/session2.out")"
grep -q opened "$W/session1.out" && grep -q opened "$W/session2.out"
check "7 two sessions opened beside three watches (each kind counted on its own)" $? "not opened"
for pid in "${BG_PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
BG_PIDS=()

# ---------------------------------------------------------------------------------------------------
log "8. logs: start and clean SIGTERM stop in the log file, no WARN from a clean shutdown"
for i in 1 2 3; do
  f=$W/n$i/log/fencekeeper.log
  lines_before=$(wc -l <"$f")
  stop_node $i
  rc=$STOP_RC
  tail -n +"$((lines_before + 1))" "$f" >"$W/n$i/stop.log"
  show "kill -TERM n$i; tail of n$i/log/fencekeeper.log"
  grep -E 'told to stop|stopping|stopped' "$W/n$i/stop.log" | cut -c1-200 | sed 's/^/  /'
  [ "$rc" = 0 ] && grep -q 'serving on' "$f" && grep -q 'told to stop' "$W/n$i/stop.log" &&
    grep -q 'stopped' "$W/n$i/stop.log"
  check "8 n$i: start and clean stop in its log file, exit 0" $? "exit $rc"
  warns=$(grep -E ' (WARN|ERROR) ' "$W/n$i/stop.log")
  echo "$warns" | grep . | cut -c1-200 | sed 's/^/  | /'
  [ -z "$warns" ]
  check "8 n$i: its clean shutdown logged no WARN" $? "$(echo "$warns" | grep -c .) WARN/ERROR lines"
done
others=$(grep -hE ' (WARN|ERROR) ' "$W"/n[123]/stop.log | grep -v 'Follower failed' | grep -c .)
echo "  WARN/ERROR lines during the stops on all nodes, but 'Follower failed': $others"

# ---------------------------------------------------------------------------------------------------
log "summary"
printf '%s\n' "${SUMMARY[@]}"
echo "$FAILS failed"
exit "$FAILS"
