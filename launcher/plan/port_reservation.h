#pragma once
// Ports for the processes of one node.
//
// Paddle probes a free port and releases it before the child binds it, so two launches started
// together can be handed the same port. PortReservation closes that race between paddle-launch
// instances: each port it hands out is locked (an flock on LOCK_DIR/PORT, held for the
// launcher's whole life, so restarts keep it) and kept bound until just before the children start.

#include <string>
#include <string_view>
#include <vector>

namespace paddle::launcher {

// Where planning gets free ports for this node.
class PortSource {
 public:
  virtual ~PortSource() = default;
  virtual std::vector<int> take_free_ports(int count) = 0;
};

class PortReservation : public PortSource {
 public:
  // `lock_dir` is created (world-writable, sticky) when missing.
  explicit PortReservation(std::string lock_dir);
  ~PortReservation() override;
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;

  // Ports free on every address of this machine and locked by no other paddle-launch.
  // Throws common::UsageError ("no free ports") when it cannot find `count` of them.
  std::vector<int> take_free_ports(int count) override;

  // Unbinds the probe sockets (the locks stay) so that the children can bind the ports.
  void release_sockets();

 private:
  std::string lock_dir_;
  std::vector<int> sockets_;
  std::vector<int> lock_fds_;
};

// The default lock directory: $TMPDIR/paddle-launch-ports, else /tmp/paddle-launch-ports.
std::string default_port_lock_dir(const std::string& tmpdir);

// Throws common::UsageError naming `what` when one of `ports` on `ip` is taken by a listening socket.
// Addresses that are not on this machine are not checked.
void check_ports_bindable(const std::string& ip, const std::vector<int>& ports, std::string_view what);

}  // namespace paddle::launcher
