# shellcheck shell=bash
# rping with siw in each MPA mode one of the two can be set to (siw's own
# settings are compiled in: CRC only if asked, revision 2, no peer to
# peer): we ask for CRC or not, in revision 1 or 2, peer to peer or not as
# the initiator; as the responder we grant CRC or not. The MPA frames on
# the wire must show what was asked for and agreed.
#
# layers: stock
test_interop_siw_rping_modes() {
	siw_pair
	trap siw_cleanup EXIT
	local crc rev p2p flags rc=0
	for rev in 1 2; do
		for crc in 0 1; do
			for p2p in 0 1; do
				[ $rev = 1 ] && [ $p2p = 1 ] && continue
				echo "== softiwarp initiator: rev $rev crc $crc p2p $p2p"
				iw_param mpa_rev $rev
				iw_param mpa_crc $crc
				iw_param peer_to_peer $p2p
				flags=$((crc * 0x40 + (rev - 1) * 0x10))
				if [ $rev = 1 ]; then
					# siw's QP answering revision 1 has no ORD:
					# rping's server would read. Sends only.
					mpa_cap "$P_UCMA" 1 $flags 1 $flags ucma_run - b 10.0.0.1 \
						-c 2 -C 10 -S 4000 || rc=1
					continue
				fi
				mpa_rping - b 10.0.0.1 $rev $flags $rev $flags || rc=1
			done
		done
	done
	iw_param mpa_rev 2
	iw_param peer_to_peer 0
	for crc in 0 1; do
		echo "== softiwarp responder: crc $crc"
		iw_param mpa_crc $crc
		mpa_rping b - 10.0.0.2 2 0x10 2 $((crc * 0x40 + 0x10)) || rc=1
	done
	return $rc
}
