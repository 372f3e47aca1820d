/**
 * The bare baseline: a plain Node keep-alive reverse proxy, no auth, no parsing, no
 * billing. Prints `{"url": …}`. BENCH_PROXY_TARGET is the upstream origin.
 */
import http from 'node:http';

const target = new URL(process.env.BENCH_PROXY_TARGET ?? 'http://127.0.0.1:1');
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const server = http.createServer((req, res) => {
  const upstream = http.request(
    { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host }, agent },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address === 'object') console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
