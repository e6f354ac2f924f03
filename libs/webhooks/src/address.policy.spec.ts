import { isPublicAddress } from './address.policy';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '[::1]',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '2002:c0a8:101::1',
    '2001:db8::1',
    '64:ff9b:1::a9fe:a9fe',
    '64:ff9b:1:ffff::808:808',
    '::ffff:0:127.0.0.1',
    '::ffff:0:a9fe:a9fe',
    '::ffff:0:10.0.0.1',
    '2002:7f00:1::',
    '2001:0:7f00:1::f7f7:f7f7', // Teredo, server 127.0.0.1
    '2001:0:808:808:0:0:f5ff:fffe', // Teredo, client 10.0.0.1 (flipped)
    'localhost',
    'not-an-ip',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '::ffff:0:8.8.8.8',
    '2002:808:808::1',
    '2001:0:808:808:0:0:f7f7:f7f7', // Teredo, server 8.8.8.8, client 8.8.8.8
  ])('allows %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});
