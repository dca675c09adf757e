"""The interface addresses where iproute2 is missing, run as ``python -S -c SOURCE`` (net.addrs, firewall.addresses).

Many container images (the CUDA and PyTorch ones among them) have no ``ip``: a real GPU node showed it. IPv4 comes
from the kernel's SIOCGIFADDR / SIOCGIFNETMASK ioctls per interface (the primary address of each), IPv6 from
/proc/net/if_inet6. Prints one line per address, ``NAME inet|inet6 ADDRESS/PREFIX``, after the marker line
``== addrs: python`` (preflight.interfaces.parse_ip_addr reads both this and ``ip -o addr show``).
"""
import _socket
import fcntl

SIOCGIFADDR, SIOCGIFNETMASK = 0x8915, 0x891B
print("== addrs: python")
sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
for _, name in _socket.if_nameindex():
    request = name.encode()[:15].ljust(40, b"\0")  # struct ifreq: the name, then room for the address
    try:
        address = _socket.inet_ntoa(fcntl.ioctl(sock.fileno(), SIOCGIFADDR, request)[20:24])
        mask = fcntl.ioctl(sock.fileno(), SIOCGIFNETMASK, request)[20:24]
    except OSError:  # no IPv4 address on it
        continue
    prefix = bin(int.from_bytes(mask, "big")).count("1")
    print("%s inet %s/%d" % (name, address, prefix))
sock.close()
try:
    with open("/proc/net/if_inet6") as table:  # address(hex) ifindex prefix(hex) scope flags name
        for line in table:
            fields = line.split()
            if len(fields) == 6 and len(fields[0]) == 32:
                hexa = fields[0]
                print("%s inet6 %s/%d" % (fields[5], ":".join(hexa[i:i + 4] for i in range(0, 32, 4)),
                                          int(fields[2], 16)))
except OSError:
    pass
