# shellcheck shell=bash
# fi_pingpong_interop_siw: libfabric's fi_pingpong between siw and
# softiwarp, each as the server, MSG and RDM endpoints, bytes checked.
# (rdma_rxe runs neither: not a peer to try softroce against here.)
#
# layers: stock
# timeout: 600
test_fi_pingpong_interop_siw() {
	siw_pair
	trap siw_cleanup EXIT
	fi_pingpong_run msg - veth0 b veth1 10.0.0.1
	fi_pingpong_run rdm - veth0 b veth1 10.0.0.1
	fi_pingpong_run msg b veth1 - veth0 10.0.0.2
	fi_pingpong_run rdm b veth1 - veth0 10.0.0.2
}
