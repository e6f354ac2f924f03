// Submit a task and wait for it, then list the thread's ended tasks. Run it against `npm start`:
//   npm run build && GATEWAY_TOKEN=$(cat .data/dev-api-key) node dist/clients/typescript/examples/quickstart.js
import { createGatewayClient, listAllTasks, submitAndWait } from '@mcp-task-gateway/client';

async function main(): Promise<void> {
  const client = createGatewayClient({
    baseUrl: process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000',
    token: process.env.GATEWAY_TOKEN ?? '',
  });
  const task = await submitAndWait(client, {
    threadId: 'quickstart',
    body: { toolset: 'demo-ordinary', arguments: { duration_ms: 1000 } },
  });
  console.log(`${task.task_id} ${task.status}`, JSON.stringify(task.result));
  for await (const ended of listAllTasks(client, { thread_id: 'quickstart', status: 'terminal' })) {
    console.log(`${ended.task_id} ${ended.status} ${ended.created_at}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
