// kafka-node's ConsumerGroup against zkafka: two members split a topic's partitions, consume what the test
// produced, commit and leave; a third member of the group then resumes after the committed offsets.
// argv[2]: {"brokers": [...], "topic": "t", "group": "g", "first": N, "more": M}. JSON on stdout's last line.
const { ConsumerGroup, KafkaClient, Producer } = require('kafka-node')

const args = JSON.parse(process.argv[2])
const kafkaHost = args.brokers.join(',')

function member (name, seen) {
  const group = new ConsumerGroup({
    kafkaHost, groupId: args.group, id: name, fromOffset: 'earliest', protocol: ['roundrobin'],
    autoCommit: false, sessionTimeout: 10000, heartbeatInterval: 500,
  }, [args.topic])
  group.on('message', m => seen.push({ member: name, partition: m.partition, offset: m.offset, value: m.value }))
  group.on('error', e => console.error(name, e))
  return group
}

const until = (check, what) => new Promise((resolve, reject) => {
  const deadline = Date.now() + 40000
  const poll = () => check() ? resolve() : Date.now() > deadline ? reject(new Error(`timed out: ${what}`)) : setTimeout(poll, 50)
  poll()
})

const call = (target, method, ...rest) => new Promise((resolve, reject) =>
  target[method](...rest, (err, data) => err ? reject(err) : resolve(data)))

function produce (from, to) {
  const client = new KafkaClient({ kafkaHost })
  const producer = new Producer(client)
  const messages = []
  for (let i = from; i < to; i++) messages.push({ topic: args.topic, partition: i % 4, messages: [`m${i}`] })
  return new Promise((resolve, reject) => producer.on('ready', resolve).on('error', reject))
    .then(() => call(producer, 'send', messages))
    .then(() => call(producer, 'close'))
}

async function main () {
  const result = {}
  await produce(0, args.first)
  const seen = []
  const members = [member('a', seen), member('b', seen)]
  await until(() => seen.length >= args.first && members.every(m => m.generationId && !m.rebalancing),
    `two members reading ${args.first} messages`)
  result.partitions = Object.fromEntries(members.map(m =>
    [m.options.id, Object.values(m.topicPayloads || []).map(p => p.partition).sort()]))
  result.first = seen
  await Promise.all(members.map(m => call(m, 'commit', true)))
  await Promise.all(members.map(m => call(m, 'close', false)))
  await produce(args.first, args.first + args.more)
  const resumed = []
  const third = member('c', resumed)
  await until(() => resumed.length >= args.more, `member c resuming ${args.more} messages`)
  result.resumed = resumed
  await call(third, 'close', true)
  return result
}

main().then(
  result => { console.log(JSON.stringify(result)); process.exit(0) },
  e => { console.error(e); console.log(JSON.stringify({ fatal: `${e.name}: ${e.message}` })); process.exit(1) })
