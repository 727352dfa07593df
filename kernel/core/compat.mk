# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build-time probes of what the kernel headers offer, for compat.h: each
# greps the headers built against and sets -DSOFTRDMA_HAVE_<NAME> if they
# have it. Included by the Kbuild files of the module and of its tests.

# $(call softrdma_probe,NAME,FILES,ERE): -DSOFTRDMA_HAVE_NAME if one of
# FILES (under include/; missing ones are skipped) has a line matching ERE
# (which can hold no comma or parenthesis: "." stands for one).
softrdma_probe = $(if $(filter-out 0,$(shell cat /dev/null $(wildcard \
	$(addprefix $(srctree)/include/,$(2))) | grep -c -E '$(strip $(3))')),\
	-DSOFTRDMA_HAVE_$(1))

ccflags-y += $(call softrdma_probe,TIMER_CONTAINER_OF,linux/timer.h,\
	\<timer_container_of\>)
ccflags-y += $(call softrdma_probe,HRTIMER_SETUP,linux/hrtimer.h,\
	\<hrtimer_setup\>)
ccflags-y += $(call softrdma_probe,CRC32C,linux/crc32.h,\<crc32c\>.u32 crc)
# crc32_le() and crc32c() dispatch to the CPU's CRC instructions (and say
# so by crc32_optimizations()); before, they are table-driven C and the
# fast CRCs are the crypto API's drivers (compat.c, which Kbuild then adds).
softrdma_crc_arch := $(call softrdma_probe,CRC_ARCH,linux/crc32.h,\
	\<CRC32_LE_OPTIMIZATION\>)
ccflags-y += $(softrdma_crc_arch)
ccflags-y += $(call softrdma_probe,SOCKADDR_UNSIZED,linux/socket.h,\
	struct sockaddr_unsized \{)
ccflags-y += $(call softrdma_probe,IB_UMEM_GET_VA,rdma/ib_umem.h,\
	\<ib_umem_get_va\>)
# ODP umems keep their pages in an hmm_dma_map (6.16 on); before, in a
# pfn_list and a dma_list whose low bits say read and write.
ccflags-y += $(call softrdma_probe,HMM_DMA_MAP,rdma/ib_umem_odp.h,\
	struct hmm_dma_map map;)
ccflags-y += $(call softrdma_probe,IB_DMAH,rdma/ib_verbs.h,struct ib_dmah \{)
# ODP caps for RDMA FLUSH and ATOMIC WRITE (6.15 on).
ccflags-y += $(call softrdma_probe,ODP_FLUSH,rdma/ib_verbs.h,\<IB_ODP_SUPPORT_FLUSH\>)
ccflags-y += $(call softrdma_probe,IB_FLUSH,rdma/ib_verbs.h,\<IB_WR_FLUSH\>)
ccflags-y += $(call softrdma_probe,SPLICE_PAGES,linux/gfp.h \
	linux/page_frag_cache.h,\<page_frag_cache_drain\>)
# create_cq's last argument, on the line after its name.
ifneq ($(shell grep -A1 -F '(*create_cq)' $(srctree)/include/rdma/ib_verbs.h | \
	grep -c uverbs_attr_bundle),0)
ccflags-y += -DSOFTRDMA_HAVE_CREATE_CQ_ATTRS
endif
