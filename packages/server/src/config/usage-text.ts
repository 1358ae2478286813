// The `flotilla --help` text: nats-server's flag set and section layout, with Flotilla's own wording.
// Flags marked "(ignored)" are accepted so nats-server scripts run unchanged but have no effect.

export const USAGE_TEXT = `
Usage: flotilla [options]

Server Options:
    -a, --addr, --net <host>         Host address to bind for clients (default: 0.0.0.0)
    -p, --port <port>                Client port; -1 picks a free port (default: 4222)
    -n, --name
        --server_name <server_name>  Name of this server (default: generated)
    -m, --http_port <port>           Port for HTTP monitoring (/healthz, /varz, ...)
    -c, --config <file>              Configuration file (nats-server syntax)
    -t                               Check the configuration file and exit
        --ports_file_dir <dir>       Write <executable>_<pid>.ports into this directory
    -P, --pid <file>                 File to store PID
    -sl,--signal <signal>[=<pid>]    Send signal to a flotilla process (ldm, stop, quit, term, reopen, reload)
                                     <pid> can be either a PID (e.g. 1) or the path to a PID file (e.g. /var/run/flotilla.pid)
    -ms,--https_port <port>          (ignored)
        --client_advertise <string>  Client URL to advertise to other servers

Logging Options:
    -l, --log <file>                 Write the log to this file
    -D, --debug                      Debug logging
    -V, --trace                      Trace logging (protocol traffic)
    -VV                              Same as -V
    -DV                              Debug and trace logging
    -DVV                             Same as -DV
    -T, --logtime                    (ignored; entries always carry time stamps)
    -s, --syslog                     (ignored)
    -r, --remote_syslog <addr>       (ignored)
        --log_size_limit <limit>     Logfile size limit (bytes) past which it is rotated
        --max_traced_msg_len <len>   (ignored)

JetStream Options:
    -js, --jetstream                 Enable JetStream
    -sd, --store_dir <dir>           Directory for JetStream data (default: a temporary directory)

Authorization Options:
        --user <user>                Username clients must present
        --pass <password>            Password clients must present
        --auth <token>               Token clients must present

TLS Options:
        --tls                        Enable TLS, do not verify clients (default: false)
        --tlscert <file>             Server certificate file
        --tlskey <file>              Private key for server certificate
        --tlsverify                  Enable TLS, verify client certificates
        --tlscacert <file>           Client certificate CA for verification

Cluster Options:
        --routes <url-1, url-2>      Cluster peers to connect to (nats://host:port or host:port)
        --cluster <cluster-url>      Address this server listens on for cluster peers
        --cluster_listen <url>       Same as --cluster
        --cluster_name <string>      Cluster name
        --cluster_advertise <string> Cluster URL to advertise to other servers
        --no_advertise <bool>        Do not advertise known cluster information to clients
        --connect_retries <number>   (ignored)

Profiling Options:
        --profile <port>             (ignored)

Common Options:
    -h, --help                       Show this message
    -v, --version                    Show version
        --help_tls                   Show this message
`;
