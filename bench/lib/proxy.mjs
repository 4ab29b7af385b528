// Child process: a TCP proxy in front of Redis that counts the commands clients send (script
// internals excluded, unlike INFO commandstats) and can hold every server reply back by a fixed
// delay, so a caller's round trips show up as multiples of that delay.
// Usage (forked): proxy.mjs <redis-port>; control over IPC: {delay}, {reset}, {counts}.
import net from 'node:net';

const target = Number(process.argv[2]);
let delay = 0;
let counts = new Map();

/** Counts the RESP commands in a client's byte stream; keeps partial commands for the next chunk. */
function commandCounter() {
  let pending = Buffer.alloc(0);
  const line = (buf, at) => {
    const end = buf.indexOf('\r\n', at);
    return end < 0 ? null : { text: buf.toString('latin1', at, end), next: end + 2 };
  };
  return (chunk) => {
    let buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    for (;;) {
      const head = line(buf, at);
      if (!head) break;
      let name;
      let next;
      if (head.text.startsWith('*')) {
        let pos = head.next;
        const n = Number(head.text.slice(1));
        let complete = true;
        for (let i = 0; i < n; i++) {
          const len = line(buf, pos);
          if (!len || buf.length < len.next + Number(len.text.slice(1)) + 2) {
            complete = false;
            break;
          }
          const end = len.next + Number(len.text.slice(1));
          if (i === 0) name = buf.toString('latin1', len.next, end).toLowerCase();
          pos = end + 2;
        }
        if (!complete) break;
        next = pos;
      } else {
        name = head.text.split(' ')[0].toLowerCase(); // inline command
        next = head.next;
      }
      if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
      at = next;
    }
    pending = buf.subarray(at);
  };
}

const server = net.createServer((client) => {
  const upstream = net.connect(target, '127.0.0.1');
  const count = commandCounter();
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.on('data', (chunk) => {
    count(chunk);
    upstream.write(chunk);
  });
  upstream.on('data', (chunk) => {
    if (delay > 0) setTimeout(() => client.writable && client.write(chunk), delay);
    else client.write(chunk);
  });
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('close', close).on('error', close);
  upstream.on('close', close).on('error', close);
});

server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (msg) => {
  if ('delay' in msg) delay = msg.delay;
  if (msg.counts || msg.reset) process.send({ counts: Object.fromEntries(counts) });
  if (msg.reset) counts = new Map();
});
process.on('disconnect', () => process.exit(0));
