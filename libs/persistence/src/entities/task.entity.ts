import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { Contract, TaskStatus } from '@app/common';

/** A stored task. Columns mirror migrations/…-InitialSchema; hot paths use SQL files instead. */
@Entity({ name: 'tasks' })
export class TaskEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'user_id' }) userId!: string;
  @Column('text', { name: 'thread_id' }) threadId!: string;
  @Column('text') toolset!: string;
  @Column('text') contract!: Contract;
  @Column('text') server!: string;
  @Column('text') status!: TaskStatus;
  @Column('jsonb') input!: unknown;
  @Column('jsonb', { nullable: true }) metadata!: Record<string, unknown> | null;
  @Column('text', { name: 'idempotency_key', nullable: true }) idempotencyKey!: string | null;
  @Column('text', { name: 'request_hash', nullable: true }) requestHash!: string | null;
  @Column('text', { name: 'remote_task_id', nullable: true }) remoteTaskId!: string | null;
  @Column('text', { name: 'remote_session_id', nullable: true }) remoteSessionId!: string | null;
  @Column('text', { name: 'remote_protocol_version', nullable: true })
  remoteProtocolVersion!: string | null;
  @Column('jsonb', { name: 'driver_state', nullable: true }) driverState!: Record<
    string,
    unknown
  > | null;
  @Column('text', { name: 'pinned_worker_id', nullable: true }) pinnedWorkerId!: string | null;
  @Column('timestamptz', { name: 'submit_started_at', nullable: true })
  submitStartedAt!: Date | null;
  @Column('int', { name: 'submit_attempts' }) submitAttempts!: number;
  @Column('jsonb', { nullable: true }) result!: unknown;
  @Column('text', { name: 'result_preview', nullable: true }) resultPreview!: string | null;
  @Column('boolean', { name: 'result_truncated' }) resultTruncated!: boolean;
  @Column('jsonb', { name: 'result_artifact', nullable: true }) resultArtifact!: unknown;
  @Column('jsonb', { name: 'input_required', nullable: true }) inputRequired!: unknown;
  @Column('jsonb', { name: 'input_responses', nullable: true }) inputResponses!: unknown;
  @Column('jsonb', { nullable: true }) progress!: unknown;
  @Column('jsonb', { name: 'trace_context', nullable: true }) traceContext!: unknown;
  @Column('text', { name: 'error_code', nullable: true }) errorCode!: string | null;
  @Column('text', { name: 'error_message', nullable: true }) errorMessage!: string | null;
  @Column('text', { name: 'last_error', nullable: true }) lastError!: string | null;
  @Column('int', { name: 'consecutive_errors' }) consecutiveErrors!: number;
  @Column('int', { name: 'poll_count' }) pollCount!: number;
  @Column('int', { name: 'claim_count' }) claimCount!: number;
  @Column('timestamptz', { name: 'last_success_at', nullable: true }) lastSuccessAt!: Date | null;
  @Column('timestamptz', { name: 'cancel_requested_at', nullable: true })
  cancelRequestedAt!: Date | null;
  /** 'deadline' when the deadline sweep requested the cancel (docs/contracts.md, "Deadlines"). */
  @Column('text', { name: 'cancel_reason', nullable: true }) cancelReason!: string | null;
  @Column('timestamptz', { name: 'deadline_at', nullable: true }) deadlineAt!: Date | null;
  @Column('timestamptz', { name: 'thread_deleted_at', nullable: true })
  threadDeletedAt!: Date | null;
  @Column('int', { name: 'event_seq' }) eventSeq!: number;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
  @Column('timestamptz', { name: 'submitted_at', nullable: true }) submittedAt!: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt!: Date | null;
  @Column('text', { name: 'lease_owner', nullable: true }) leaseOwner!: string | null;
  @Column('uuid', { name: 'lease_token', nullable: true }) leaseToken!: string | null;
  @Column('timestamptz', { name: 'lease_expires_at', nullable: true }) leaseExpiresAt!: Date | null;
  @Column('timestamptz', { name: 'next_attempt_at', nullable: true }) nextAttemptAt!: Date | null;
}
