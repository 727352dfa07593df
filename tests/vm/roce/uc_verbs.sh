# shellcheck shell=bash
# UC between two softroce devices, our byte-checking program: SENDs and
# WRITEs with immediate of one to many packets (PSNs across the 24-bit
# wrap), RC's attributes refused on the way to RTS, and what UC drops
# silently (a SEND with no receive, a WRITE with a bad rkey), each drop
# counted in rx_uc_drops.
#
# layers: stock
test_uc_verbs() {
	rc_pair
	"$RCTEST" "${RC_AB[@]}" --uc --sizes 0,1,1023,1025,4096,65536
	"$RCTEST" "${RC_AB[@]}" --uc --mtu 256 --sizes 5,4096,20000
	local drops
	drops=$(counter sr1 rx_uc_drops)
	echo "sr1 rx_uc_drops: $drops"
	# Two runs, each one SEND without a receive and one bad-rkey WRITE.
	[ "$drops" -ge 4 ]
}
