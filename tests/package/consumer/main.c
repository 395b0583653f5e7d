/* The C twin of main.cpp: the same steps through the C API (resplock/c_api/lock.h), built by a C
 * compiler against the installed package, printing the same lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resplock/c_api/lock.h"
#include "resplock/ports/posix.h"

int main(int argc, char** argv) {
    static char buf_a[512];
    static char buf_b[512];
    static resplock_conn_t conn_a;
    static resplock_conn_t conn_b;
    static resplock_lock_t first;
    static resplock_lock_t second;
    resplock_posix_t net_a;
    resplock_posix_t net_b;
    resplock_port_t port_a;
    resplock_port_t port_b;
    resplock_conn_config_t cfg;

    if (argc != 3) {
        fprintf(stderr, "usage: %s PORT KEY\n", argv[0]);
        return 2;
    }
    printf("status_str: %s\n", resplock_status_str(RESPLOCK_STATUS_busy));

    resplock_conn_config_init(&cfg);
    cfg.host = "127.0.0.1";
    cfg.port = (uint16_t)atoi(argv[1]);
    if (resplock_posix_port_init(&net_a, NULL, &port_a) != RESPLOCK_STATUS_ok ||
        resplock_posix_port_init(&net_b, NULL, &port_b) != RESPLOCK_STATUS_ok ||
        resplock_conn_init(&conn_a, &port_a, &cfg, buf_a, sizeof buf_a) != RESPLOCK_STATUS_ok ||
        resplock_conn_init(&conn_b, &port_b, &cfg, buf_b, sizeof buf_b) != RESPLOCK_STATUS_ok ||
        resplock_lock_init(&first, &conn_a, argv[2], strlen(argv[2])) != RESPLOCK_STATUS_ok ||
        resplock_lock_init(&second, &conn_b, argv[2], strlen(argv[2])) != RESPLOCK_STATUS_ok) {
        fprintf(stderr, "init failed\n");
        return 1;
    }

    printf("acquire: %s\n", resplock_status_str(resplock_lock_acquire(&first, 10000)));
    printf("held: %s\n", resplock_lock_remaining_ms(&first) > 0 ? "yes" : "no");
    printf("second: %s\n", resplock_status_str(resplock_lock_acquire(&second, 10000)));
    printf("release: %s\n", resplock_status_str(resplock_lock_release(&first)));
    printf("second again: %s\n", resplock_status_str(resplock_lock_acquire(&second, 10000)));
    printf("release: %s\n", resplock_status_str(resplock_lock_release(&second)));
    resplock_conn_deinit(&conn_a);
    resplock_conn_deinit(&conn_b);
    return 0;
}
