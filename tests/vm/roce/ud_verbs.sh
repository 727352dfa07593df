# shellcheck shell=bash
# UD conformance (verbs_ud.cpp) between two softroce devices, IPv4 and
# IPv6: GRH bytes, Q_Key rules, drops counted, length errors, the send
# queue error state (SQE: flushed sends, receives go on, SQE -> RTS).
#
# layers: stock
# timeout: 300
test_ud_verbs() {
	rc_pair
	"$UDTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$UDTEST" sr0 fd00::1 sr1 fd00::2
}
