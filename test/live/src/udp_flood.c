/* udp_flood - UDP sender / sink for the live lab's nic-softirq scenario.
 *
 * USAGE: udp_flood send ADDR PORT [seconds] [payload]
 *        udp_flood recv PORT [seconds]
 * The sender blasts small datagrams with sendmmsg(); over a veth pair the receive
 * path (NET_RX softirq: net_rx_action -> process_backlog / veth_poll) runs on the
 * CPU the sender is pinned to. The sink only drains its socket.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static int usage(void)
{
	fprintf(stderr, "usage: udp_flood send ADDR PORT [seconds] [payload] | recv PORT [seconds]\n");
	return 2;
}

static int flood(const char *addr, int port, int seconds, int payload)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct mmsghdr msgs[BATCH];
	struct iovec iov;
	static char buf[1500];
	time_t end = time(NULL) + seconds;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || inet_pton(AF_INET, addr, &to.sin_addr) != 1 || payload > (int)sizeof(buf))
		return usage();
	iov.iov_base = buf;
	iov.iov_len = payload;
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_name = &to;
		msgs[i].msg_hdr.msg_namelen = sizeof(to);
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (time(NULL) < end)
		sendmmsg(fd, msgs, BATCH, 0);	/* ENOBUFS etc. are expected under flood */
	return 0;
}

static int sink(int port, int seconds)
{
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tick = { 1, 0 };
	static char buf[65536];
	time_t end = time(NULL) + seconds;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)) != 0) {
		perror("udp_flood: bind");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof(tick));
	while (time(NULL) < end)
		recv(fd, buf, sizeof(buf), 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "send") == 0)
		return flood(argv[2], atoi(argv[3]), argc > 4 ? atoi(argv[4]) : 60,
			     argc > 5 ? atoi(argv[5]) : 64);
	if (argc >= 3 && strcmp(argv[1], "recv") == 0)
		return sink(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 60);
	return usage();
}
