# SPDX-License-Identifier: MIT
# Two network namespaces joined by veth for the network tests ($NA at $IPA, $NB at $IPB, MTU
# 9000, no IPv6 chatter), and a blackhole route in the root namespace so that 10.200.0.x can
# never leave the machine by the default route. Sourced after lib.sh; net_up sets them up,
# the exit trap removes them.
NA=nvtA$$
NB=nvtB$$
IPA=10.200.0.1
IPB=10.200.0.2
NET_ROUTE=0

# The blackhole route is this run's own (its metric is the PID): a test running beside it (on a
# shared machine) that ends first removes only its own route, never the one this run relies on.
net_down() {
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	[ "$NET_ROUTE" = 1 ] && ip route del blackhole 10.200.0.0/24 metric $$ 2>/dev/null
}
trap 'net_down; cleanup' EXIT

net_up() {
	ip route add blackhole 10.200.0.0/24 metric $$ || fail "blackhole route"
	NET_ROUTE=1
	ip netns add "$NA" && ip netns add "$NB" || fail "ip netns add"
	ip link add "va$$" type veth peer name "vb$$" || fail "veth"
	ip link set "va$$" netns "$NA" && ip link set "vb$$" netns "$NB" || fail "veth into namespaces"
	for n in "$NA" "$NB"; do
		ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
		ip -n "$n" link set lo up
	done
	ip -n "$NA" addr add "$IPA/24" dev "va$$" && ip -n "$NB" addr add "$IPB/24" dev "vb$$" || fail "addresses"
	ip -n "$NA" link set "va$$" mtu 9000 up && ip -n "$NB" link set "vb$$" mtu 9000 up || fail "links up"
	IFA=va$$
	IFB=vb$$
}
