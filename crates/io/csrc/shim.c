/*
 * xlat-io's DPDK shim: thin wrappers of DPDK 22.11's static inline functions and of the calls
 * that take DPDK's large configuration structs, so that the Rust side declares by hand only
 * small, stable signatures (no bindgen). Frames are written and read in Rust through data
 * pointers the shim hands out; the shim touches the mbufs.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_cycles.h>

_Static_assert(sizeof(struct rte_ether_addr) == 6, "rte_ether_addr size");
_Static_assert(RTE_ETH_NAME_MAX_LEN == 64, "RTE_ETH_NAME_MAX_LEN changed: update src/dpdk/ffi.rs");

/*
 * The burst functions, one or two calls per burst. The Rust side reads and writes no field of
 * an rte_mbuf itself: it gets data pointers and hands back lengths, and it keeps its metadata in
 * the dynamic field whose offset xlat_pool_prepare gives.
 */

/*
 * The sender's metadata of an mbuf, in a dynamic field of its header (registered once per
 * process as "xlat_sender_meta", in the header's second cache line, which freeing an mbuf reads
 * anyway): [0] the length it was sent with, [1] the cookie of what its data holds. A non-zero
 * cookie vouches that the mbuf's header is as the sender left it: reset, with that length (see
 * xlat_tx_reset). Everything else that uses an mbuf of the pool clears the cookie: the receive
 * path (xlat_rx) and the pool's creation. The field lies outside the data and the headroom, so a
 * sender that patches a recycled frame touches only the header line that holds it and the
 * frame's bytes it changes, and one that resets an mbuf touches no line testpmd's txonly does not.
 */
static int xlat_meta_off = -1;
#define XLAT_META(m) RTE_MBUF_DYNFIELD((m), xlat_meta_off, uint64_t *)

/* What xlat_pool_prepare finds out about a pool's mbufs: -2 before the first mbuf, -1 when
 * they differ. */
struct pool_layout {
	long data_off; /* a reset mbuf's data, from the mbuf's address */
	long line_off; /* that data's address modulo the cache line */
};

static void clear_meta(struct rte_mempool *mp, void *opaque, void *obj, unsigned int idx)
{
	struct rte_mbuf *m = obj;
	struct pool_layout *l = opaque;
	char *data = (char *)m->buf_addr + RTE_PKTMBUF_HEADROOM;
	long line = (long)((uintptr_t)data % RTE_CACHE_LINE_SIZE);

	(void)mp;
	(void)idx;
	XLAT_META(m)[0] = 0;
	XLAT_META(m)[1] = 0;
	/* Every mbuf must have its data (after reset) at the same offset from its header. */
	if (m->buf_len < RTE_PKTMBUF_HEADROOM || (l->data_off != -2 && l->data_off != data - (char *)m))
		l->data_off = -1;
	else
		l->data_off = data - (char *)m;
	/* Frames are placed in their mbufs' lines (xlat_tx_reset's lead) when all agree. */
	if (l->line_off != -2 && l->line_off != line)
		l->line_off = -1;
	else
		l->line_off = line;
}

/*
 * Register the sender's metadata field (the first call; later calls get the same offset), clear
 * it in every mbuf of a new pool and return the offset of a reset mbuf's data from the mbuf's
 * address (the same for all of them), or -1; *meta_off gets the field's offset from the mbuf's
 * address (-1 with rte_errno set when it could not be registered), *line_off that data's
 * address modulo the cache line (-1 when it differs between mbufs) and *line the cache line's
 * size.
 */
long xlat_pool_prepare(struct rte_mempool *pool, long *meta_off, long *line_off, long *line)
{
	static const struct rte_mbuf_dynfield meta = {
		.name = "xlat_sender_meta",
		.size = 2 * sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};
	struct pool_layout l = { -2, -2 };

	*line = RTE_CACHE_LINE_SIZE;
	*line_off = -1;
	if (xlat_meta_off < 0)
		xlat_meta_off = rte_mbuf_dynfield_register(&meta);
	*meta_off = xlat_meta_off;
	if (xlat_meta_off < 0)
		return -1;
	rte_mempool_obj_iter(pool, clear_meta, &l);
	*line_off = l.line_off < 0 ? -1 : l.line_off;
	return l.data_off < 0 ? -1 : l.data_off;
}

/* Take n mbufs from the pool as they are (all or none: returns 0 or -1). */
int xlat_tx_get(struct rte_mempool *pool, struct rte_mbuf **pkts, unsigned int n)
{
	return rte_mempool_get_bulk(pool, (void **)pkts, n);
}

/*
 * Reset an mbuf whose metadata did not vouch for it and give it length len, its data starting
 * lead bytes before the reset mbuf's (lead below the headroom): called by the sender in the
 * pass that writes its frame, so that its header lines are visited once.
 */
void xlat_tx_reset(struct rte_mbuf *m, uint16_t len, uint16_t lead)
{
	rte_pktmbuf_reset(m);
	m->data_off -= lead;
	m->data_len = len;
	m->pkt_len = len;
}

/*
 * Transmit pkts[0..n) and free pkts[sent..total): those the driver did not take and those taken
 * but not filled. Returns sent.
 */
uint16_t xlat_tx_send(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, uint16_t total)
{
	uint16_t sent = 0;

	if (n > 0)
		sent = rte_eth_tx_burst(port, queue, pkts, n);
	if (sent < total)
		rte_pktmbuf_free_bulk(pkts + sent, total - sent);
	return sent;
}

/*
 * Receive up to n frames; data[i] and lens[i] give each one's first segment (frames up to the
 * mbuf data room arrive in one segment). The device wrote these mbufs: their sender metadata is
 * cleared. The caller frees them with rte_pktmbuf_free_bulk.
 */
uint16_t xlat_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, const uint8_t **data, uint16_t *lens, uint16_t n)
{
	uint16_t i, got = rte_eth_rx_burst(port, queue, pkts, n);

	for (i = 0; i < got; i++) {
		struct rte_mbuf *m = pkts[i];

		if (likely(xlat_meta_off >= 0))
			XLAT_META(m)[1] = 0;
		data[i] = rte_pktmbuf_mtod(m, const uint8_t *);
		lens[i] = m->data_len;
	}
	return got;
}

uint64_t xlat_rdtsc(void)
{
	return rte_rdtsc();
}

int xlat_errno(void)
{
	return rte_errno;
}

/*
 * Make the calling thread an lcore, so that mempool operations use a per-lcore cache (a thread
 * unknown to EAL takes every mbuf from the shared ring). Returns 1 when this call registered the
 * thread (the caller unregisters it at thread exit), 0 when it already was an lcore, -1 when no
 * lcore id is free (the thread then works uncached).
 */
int xlat_thread_attach(void)
{
	if (rte_lcore_id() != LCORE_ID_ANY)
		return 0;
	return rte_thread_register() == 0 ? 1 : -1;
}

void xlat_thread_detach(void)
{
	rte_thread_unregister();
}

/* What the Rust side needs from struct rte_eth_dev_info. */
struct xlat_port_info {
	uint16_t max_rx_queues;
	uint16_t max_tx_queues;
	uint32_t max_rx_pktlen;
	char driver[64];
	/* The PMD offers the receive timestamp offload (RTE_ETH_RX_OFFLOAD_TIMESTAMP). */
	uint8_t rx_timestamp;
	/* The PMD has an IEEE 1588 clock (rte_eth_timesync_read_time is implemented). */
	uint8_t timesync;
};

int xlat_port_info(uint16_t port, struct xlat_port_info *out)
{
	struct rte_eth_dev_info info;
	int ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	out->max_rx_queues = info.max_rx_queues;
	out->max_tx_queues = info.max_tx_queues;
	out->max_rx_pktlen = info.max_rx_pktlen;
	snprintf(out->driver, sizeof(out->driver), "%s", info.driver_name ? info.driver_name : "?");
	out->rx_timestamp = (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0;
	struct timespec ts;
	out->timesync = rte_eth_timesync_read_time(port, &ts) != -ENOTSUP;
	return 0;
}

/*
 * rte_eth_dev_configure with a zeroed configuration (no RSS, no offloads), except: the MTU when
 * `mtu` is not 0, fast mbuf free on transmit where the device offers it (all our mbufs come
 * from one pool and are never shared; testpmd enables it the same way), and with `rss` and
 * several receive queues, RSS on IP addresses and UDP ports where the device hashes them (a
 * device without RSS, such as net_ring, spreads frames its own way).
 */
int xlat_port_configure(uint16_t port, uint16_t nb_rx, uint16_t nb_tx, uint32_t mtu, int rss)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	if (mtu != 0)
		conf.rxmode.mtu = mtu;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	if (rss && nb_rx > 1 && (info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)) != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = NULL;
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
	}
	return rte_eth_dev_configure(port, nb_rx, nb_tx, &conf);
}

int xlat_tx_queue_setup(uint16_t port, uint16_t queue, uint16_t nb_desc, unsigned int socket)
{
	struct rte_eth_dev_info info;
	struct rte_eth_txconf txconf;
	int ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	txconf = info.default_txconf;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		txconf.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	return rte_eth_tx_queue_setup(port, queue, nb_desc, socket, &txconf);
}

/*
 * Ethernet flow control: the port's mode in *mode (0 none, 1 rx pause, 2 tx pause, 3 full:
 * enum rte_eth_fc_mode); a negative errno otherwise (-ENOTSUP: the driver has none).
 */
int xlat_flow_ctrl_get(uint16_t port, int *mode)
{
	struct rte_eth_fc_conf fc;
	int ret;

	memset(&fc, 0, sizeof(fc));
	ret = rte_eth_dev_flow_ctrl_get(port, &fc);
	if (ret == 0)
		*mode = (int)fc.mode;
	return ret;
}

/* Set the port's flow control mode (as above), autonegotiation off, its other parameters kept. */
int xlat_flow_ctrl_set(uint16_t port, int mode)
{
	struct rte_eth_fc_conf fc;
	int ret;

	memset(&fc, 0, sizeof(fc));
	ret = rte_eth_dev_flow_ctrl_get(port, &fc);
	if (ret != 0)
		return ret;
	fc.mode = (enum rte_eth_fc_mode)mode;
	fc.autoneg = 0;
	return rte_eth_dev_flow_ctrl_set(port, &fc);
}

/* 1: link up, 0: down, negative: error. */
int xlat_link_up(uint16_t port)
{
	struct rte_eth_link link;
	int ret;

	memset(&link, 0, sizeof(link));
	ret = rte_eth_link_get_nowait(port, &link);
	if (ret != 0)
		return ret;
	return link.link_status == RTE_ETH_LINK_UP ? 1 : 0;
}

/*
 * Two ring ports joined back to back: what `a` transmits on either of its two transmit queues,
 * `b` receives on its one receive queue, and vice versa. The rings are multi-producer, as both
 * transmit queues of a port feed the same ring. Device names are "net_ring_<a>", "net_ring_<b>".
 * Returns 0, or -1 with rte_errno set.
 */
/*
 * Two net_ring ports joined back to back with `queues` lanes per direction (at most 8): ring k
 * from a to b is a's transmit queues k (traffic) and queues + k (control), and b's receive
 * queue k; the same from b to a.
 */
int xlat_ring_pair(const char *a, const char *b, unsigned int ring_size, unsigned int queues)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *a2b[8], *b2a[8];
	struct rte_ring *a_tx[16], *b_tx[16];
	unsigned int k;

	if (queues < 1 || queues > 8)
		return -1;
	for (k = 0; k < queues; k++) {
		snprintf(name, sizeof(name), "xlat_%s_%s_%u", a, b, k);
		a2b[k] = rte_ring_create(name, ring_size, (int)rte_socket_id(), RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "xlat_%s_%s_%u", b, a, k);
		b2a[k] = rte_ring_create(name, ring_size, (int)rte_socket_id(), RING_F_SC_DEQ);
		if (a2b[k] == NULL || b2a[k] == NULL)
			return -1;
		a_tx[k] = a_tx[queues + k] = a2b[k];
		b_tx[k] = b_tx[queues + k] = b2a[k];
	}
	if (rte_eth_from_rings(a, b2a, queues, a_tx, 2 * queues, rte_socket_id()) < 0)
		return -1;
	if (rte_eth_from_rings(b, a2b, queues, b_tx, 2 * queues, rte_socket_id()) < 0)
		return -1;
	return 0;
}

unsigned int xlat_mempool_in_use(const struct rte_mempool *pool)
{
	return rte_mempool_in_use_count(pool);
}

/* The counters of rte_eth_stats that a tester reports. */
struct xlat_port_stats {
	uint64_t ipackets;
	uint64_t opackets;
	uint64_t imissed;
	uint64_t ierrors;
	uint64_t oerrors;
	uint64_t rx_nombuf;
	uint64_t obytes;
};

int xlat_port_stats(uint16_t port, struct xlat_port_stats *out)
{
	struct rte_eth_stats st;
	int ret = rte_eth_stats_get(port, &st);
	if (ret != 0)
		return ret;
	out->ipackets = st.ipackets;
	out->opackets = st.opackets;
	out->imissed = st.imissed;
	out->ierrors = st.ierrors;
	out->oerrors = st.oerrors;
	out->rx_nombuf = st.rx_nombuf;
	out->obytes = st.obytes;
	return 0;
}
