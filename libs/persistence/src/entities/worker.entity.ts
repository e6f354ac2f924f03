import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A poller process; alive while its heartbeat is younger than three intervals. */
@Entity({ name: 'workers' })
export class WorkerEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text') host!: string;
  @Column('int') pid!: number;
  @Column('text') version!: string;
  @Column('timestamptz', { name: 'started_at' }) startedAt!: Date;
  @Column('timestamptz', { name: 'heartbeat_at' }) heartbeatAt!: Date;
  @Column('timestamptz', { name: 'stopped_at', nullable: true }) stoppedAt!: Date | null;
  /** The toolsets of this worker's mcpServers file, written at registration. */
  @Column('text', { array: true }) toolsets!: string[];
}
