import net from 'node:net';

/**
 * A local TCP port nothing listens on: one the system just handed out and took back. For tests
 * of what happens when a peer is not there (connection refused).
 */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
