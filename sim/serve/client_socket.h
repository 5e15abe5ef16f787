// Whether the client of a cpp-httplib request is still connected.
//
// cpp-httplib 0.11 (Debian's) tells a handler nothing of its connection, and a non-streaming
// handler writes nothing until its answer is ready, so a write cannot fail early as a stream's
// does. ClientSocket finds the connection's socket among the process's descriptors by its
// address pair (getsockname/getpeername equal to the request's local and remote address and
// port: unique while the handler runs, since cpp-httplib closes the socket only after it) and
// peeks at it without reading: an orderly close (FIN: poll's POLLRDHUP, or a peek of 0 bytes) or
// a reset (POLLERR/POLLHUP, or a peek error) means the client went away. Bytes waiting to be read
// (a pipelined request) mean it is still there.
#ifndef SERVESIM_SIM_SERVE_CLIENT_SOCKET_H_
#define SERVESIM_SIM_SERVE_CLIENT_SOCKET_H_

#include <string>

namespace servesim::serve {

class ClientSocket {
 public:
  ClientSocket(std::string local_addr, int local_port, std::string remote_addr, int remote_port)
      : local_addr_(std::move(local_addr)),
        local_port_(local_port),
        remote_addr_(std::move(remote_addr)),
        remote_port_(remote_port) {}
  // True once the client has closed or reset the connection. The first call looks the socket
  // up (a pass over /proc/self/fd); a socket not found counts as open.
  bool closed();

 private:
  bool matches(int fd) const;
  std::string local_addr_;
  int local_port_;
  std::string remote_addr_;
  int remote_port_;
  int fd_ = -2;  // -2: not looked up yet; -1: not found
};

}  // namespace servesim::serve

#endif  // SERVESIM_SIM_SERVE_CLIENT_SOCKET_H_
