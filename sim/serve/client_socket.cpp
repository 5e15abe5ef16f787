#include "sim/serve/client_socket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

namespace servesim::serve {
namespace {

// The numeric address and port of a socket name, as cpp-httplib writes them.
bool name_of(const sockaddr_storage& a, std::string& addr, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    if (inet_ntop(AF_INET, &v4.sin_addr, buf, sizeof buf) == nullptr) return false;
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    if (inet_ntop(AF_INET6, &v6.sin6_addr, buf, sizeof buf) == nullptr) return false;
    port = ntohs(v6.sin6_port);
  } else {
    return false;
  }
  addr = buf;
  return true;
}

}  // namespace

bool ClientSocket::matches(int fd) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  std::string addr;
  int port = 0;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || !name_of(a, addr, port) ||
      port != remote_port_ || addr != remote_addr_) {
    return false;
  }
  len = sizeof a;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 && name_of(a, addr, port) &&
         port == local_port_ && addr == local_addr_;
}

bool ClientSocket::closed() {
  if (fd_ == -2) {
    fd_ = -1;
    if (DIR* d = opendir("/proc/self/fd")) {
      while (const dirent* e = readdir(d)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);  // NOLINT(runtime/int)
        if (end == e->d_name || *end != '\0') continue;
        if (matches(static_cast<int>(fd))) {
          fd_ = static_cast<int>(fd);
          break;
        }
      }
      closedir(d);
    }
  }
  if (fd_ < 0) return false;
  pollfd p{fd_, static_cast<short>(POLLIN | POLLRDHUP), 0};  // NOLINT(runtime/int): poll's type
  if (poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return true;
  char c = 0;
  const ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace servesim::serve
