// Starts @modelcontextprotocol/server-everything's Streamable HTTP transport for the tests, bound to
// 127.0.0.1 on a free port (the package listens on every interface at PORT), and prints
// `MCP_TEST_PORT=<port>` once it listens. Exits when its parent's stdin closes.
import net from 'node:net'
import { createRequire } from 'node:module'

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function patchedListen(...args) {
  this.once('listening', () => {
    const address = this.address()
    if (address && typeof address === 'object') process.stdout.write(`\nMCP_TEST_PORT=${address.port}\n`)
  })
  const callback = args.find((arg) => typeof arg === 'function')
  return callback ? listen.call(this, 0, '127.0.0.1', callback) : listen.call(this, 0, '127.0.0.1')
}
process.stdin.on('end', () => process.exit(0))
process.stdin.on('close', () => process.exit(0))
process.stdin.resume()

const require = createRequire(import.meta.url)
const entry = require.resolve('@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js', { paths: [process.cwd()] })
await import(entry)
